package e2e

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

var passLine = regexp.MustCompile(`models in the catalog are up to date.*"models":(\d+).*"updated":(\d+).*"uploaded_files":(\d+)`)

// BenchmarkPublishModels starts a gateway with every module and reports how
// long its first publishing pass takes after the gateway is ready (every
// dataset made, every data file uploaded) and the pass after a restart
// (nothing to write), as a ratio to the first.
func BenchmarkPublishModels(b *testing.B) {
	for b.Loop() {
		start := time.Now()
		g := harness.Start(b, harness.WithAllModules())
		ready := time.Since(start)
		if !g.WaitLog(passLine, 10*time.Minute) {
			b.Fatalf("no publishing pass; logs:\n%s", g.Logs())
		}
		first := time.Since(start) - ready
		m := passLine.FindStringSubmatch(g.Logs())
		start = time.Now()
		g.Restart()
		ready2 := time.Since(start)
		if !g.WaitLog(passLine, 10*time.Minute) {
			b.Fatalf("no publishing pass after restart; logs:\n%s", g.Logs())
		}
		again := time.Since(start) - ready2
		m2 := passLine.FindStringSubmatch(g.Logs())
		models, _ := strconv.Atoi(m[1])
		files, _ := strconv.Atoi(m[3])
		files2, _ := strconv.Atoi(m2[3])
		b.ReportMetric(float64(models), "models")
		b.ReportMetric(float64(files), "files_uploaded")
		b.ReportMetric(first.Seconds(), "first_pass_s_after_ready")
		b.ReportMetric(again.Seconds(), "restart_pass_s_after_ready")
		b.ReportMetric(float64(files2), "restart_files_uploaded")
		b.ReportMetric(again.Seconds()/first.Seconds(), "restart/first")
		g.Stop()
	}
}
