package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"toxgate/gateway/harness"
	"toxgate/internal/s3test"
)

// BenchmarkFileTransfer uploads and downloads one file (TOXGATE_BENCH_FILE_MB,
// default 512 MiB) through the gateway on each backend of the file store,
// and the same bytes without the gateway in the same run: for dir and
// mongodb a copy to a local file (flushed), for s3 a PutObject and a
// GetObject of the S3 server alone (versitygw, same part size). It samples
// the resident memory of the gateway and the catalog plugin during each
// transfer.
//
//	TOXGATE_BIN_DIR=$PWD/bin go test -run '^$' -bench FileTransfer -benchtime 1x ./gateway/server/
func BenchmarkFileTransfer(b *testing.B) {
	b.Run("mongodb", func(b *testing.B) {
		benchFileTransfer(b, "embedded store", []string{"TOXGATE_FILES_BACKEND=mongodb"}, nil)
	})
	b.Run("dir", func(b *testing.B) {
		benchFileTransfer(b, "files directory", []string{"TOXGATE_FILES_DIR=" + b.TempDir()}, nil)
	})
	b.Run("dir-tus", func(b *testing.B) {
		tusUpload = true
		defer func() { tusUpload = false }()
		benchFileTransfer(b, "files directory, upload through tus (PATCH + upload_id)", []string{"TOXGATE_FILES_DIR=" + b.TempDir()}, nil)
	})
	b.Run("s3", func(b *testing.B) {
		srv := s3test.Start(b)
		bucket := srv.Bucket(b)
		env := append(srv.Env(bucket, "files/"), "TOXGATE_FILES_S3_PART_BYTES="+strconv.Itoa(16<<20))
		benchFileTransfer(b, "s3 (versitygw)", env, func(src, dst string) (float64, float64) {
			c := srv.Client(b)
			ctx := context.Background()
			f, err := os.Open(src)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			t0 := time.Now()
			info, err := c.PutObject(ctx, bucket, "alone/big.bin", f, -1, minio.PutObjectOptions{PartSize: 16 << 20})
			if err != nil {
				b.Fatal(err)
			}
			up := float64(info.Size) / 1e6 / time.Since(t0).Seconds()
			t0 = time.Now()
			obj, err := c.GetObject(ctx, bucket, "alone/big.bin", minio.GetObjectOptions{})
			if err != nil {
				b.Fatal(err)
			}
			out, err := os.Create(dst)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(out, obj); err != nil {
				b.Fatal(err)
			}
			if err := out.Sync(); err != nil {
				b.Fatal(err)
			}
			out.Close()
			obj.Close()
			down := float64(info.Size) / 1e6 / time.Since(t0).Seconds()
			os.Remove(dst)
			_ = c.RemoveObject(ctx, bucket, "alone/big.bin", minio.RemoveObjectOptions{})
			return up, down
		})
	})
}

// benchFileTransfer measures one backend; alone, when set, measures the
// transfer without the gateway (up and down MB/s), else a local copy is.
func benchFileTransfer(b *testing.B, where string, env []string, alone func(src, dst string) (float64, float64)) {
	mb := 512
	if v, err := strconv.Atoi(os.Getenv("TOXGATE_BENCH_FILE_MB")); err == nil && v > 0 {
		mb = v
	}
	size := int64(mb) << 20
	dir := b.TempDir()
	src := filepath.Join(dir, "src.bin")
	writeRandomFile(b, src, size)

	g := harness.Start(b, harness.WithEnv(env...))
	admin := adminToken(b, g)
	benchAction(b, g, admin, "organization_create", map[string]any{"name": "bench"})
	benchAction(b, g, admin, "package_create", map[string]any{"name": "bench-files", "owner_org": "bench"})
	pids := []int{g.PID(), benchPluginPID(b, g, admin)}

	for i := 0; i < b.N; i++ {
		// Baseline: the same bytes without the gateway.
		base := "local copy"
		var baseUp, baseDown float64
		if alone != nil {
			base = "S3 server alone"
			baseUp, baseDown = alone(src, filepath.Join(dir, "alone.bin"))
		} else {
			t0 := time.Now()
			copyLocal(b, src, filepath.Join(dir, "copy.bin"))
			baseUp = float64(size) / 1e6 / time.Since(t0).Seconds()
			baseDown = baseUp
		}

		var url string
		upSecs, upPeak := sampled(pids, func() { url = benchUpload(b, g, admin, src) })
		downSecs, downPeak := sampled(pids, func() { benchDownload(b, g, admin, url, filepath.Join(dir, "down.bin"), size) })

		upMBs, downMBs := float64(size)/1e6/upSecs, float64(size)/1e6/downSecs
		b.ReportMetric(baseUp, "baseline_up_MB/s")
		b.ReportMetric(baseDown, "baseline_down_MB/s")
		b.ReportMetric(upMBs, "upload_MB/s")
		b.ReportMetric(downMBs, "download_MB/s")
		b.ReportMetric(upMBs/baseUp, "upload/baseline")
		b.ReportMetric(downMBs/baseDown, "download/baseline")
		b.ReportMetric(float64(upPeak)/(1<<20), "upload_peak_rss_growth_MiB")
		b.ReportMetric(float64(downPeak)/(1<<20), "download_peak_rss_growth_MiB")
		fmt.Printf("file transfer, %s, %d MiB: %s %.0f MB/s up, %.0f MB/s down; upload %.1f MB/s (%.1f%%), peak RSS growth of gateway+plugin %d MiB; download %.1f MB/s (%.1f%%), peak RSS growth %d MiB\n",
			where, mb, base, baseUp, baseDown, upMBs, 100*upMBs/baseUp, upPeak>>20, downMBs, 100*downMBs/baseDown, downPeak>>20)
	}
}

func writeRandomFile(b *testing.B, path string, size int64) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		b.Fatal(err)
	}
}

func copyLocal(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Sync(); err != nil {
		b.Fatal(err)
	}
	out.Close()
	os.Remove(to)
}

// sampled runs f while sampling the summed RSS of pids every 20 ms; it
// returns f's duration and the peak growth over the sum before f.
func sampled(pids []int, f func()) (float64, int64) {
	sum := func() int64 {
		var n int64
		for _, p := range pids {
			n += rssOf(p)
		}
		return n
	}
	before := sum()
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if s := sum(); s > peak.Load() {
				peak.Store(s)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	f()
	secs := time.Since(t0).Seconds()
	close(stop)
	wg.Wait()
	return secs, max(0, peak.Load()-before)
}

func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	var pages, resident int64
	fmt.Sscan(string(b), &pages, &resident)
	return resident * int64(os.Getpagesize())
}

// benchUpload streams src as resource_create's upload and returns the URL.
// tusUpload makes benchUpload send the file through /uploads/ (one
// streamed PATCH) and attach it with upload_id.
var tusUpload bool

func benchUpload(b *testing.B, g *harness.Gateway, token, src string) string {
	if tusUpload {
		return benchTusUpload(b, g, token, src)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("package_id", "bench-files")
		fw, _ := mw.CreateFormFile("upload", "big.bin")
		f, err := os.Open(src)
		if err == nil {
			_, err = io.Copy(fw, f)
			f.Close()
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/api/3/action/resource_create", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Success bool `json:"success"`
		Result  struct {
			URL string `json:"url"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || !out.Success {
		b.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	return out.Result.URL
}

func benchDownload(b *testing.B, g *harness.Gateway, token, url, to string, size int64) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(to)
	n, err := io.Copy(out, resp.Body)
	if err != nil || n != size || resp.StatusCode != 200 {
		b.Fatalf("download: %d, %d of %d bytes, %v", resp.StatusCode, n, size, err)
	}
	if err := out.Sync(); err != nil {
		b.Fatal(err)
	}
	out.Close()
}

func benchAction(b *testing.B, g *harness.Gateway, token, action string, data map[string]any) {
	body, _ := json.Marshal(data)
	resp, out, err := g.Do(context.Background(), http.MethodPost, "/api/3/action/"+action,
		http.Header{"Content-Type": {"application/json"}, "Authorization": {token}}, body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: %v %s", action, err, out)
	}
}

func benchPluginPID(b *testing.B, g *harness.Gateway, token string) int {
	resp, body, err := g.Do(context.Background(), http.MethodGet, "/admin/plugins", http.Header{"Authorization": {"Bearer " + token}}, nil)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("/admin/plugins: %v %s", err, body)
	}
	var out struct {
		Plugins []map[string]any `json:"plugins"`
	}
	_ = json.Unmarshal(body, &out)
	for _, p := range out.Plugins {
		if v, ok := p["pid"].(float64); ok {
			return int(v)
		}
	}
	b.Fatalf("no plugin pid in %s", body)
	return 0
}

// benchTusUpload uploads src through tus in one PATCH and attaches it;
// it returns the resource's download URL.
func benchTusUpload(b *testing.B, g *harness.Gateway, token, src string) string {
	st, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	path := tusCreate(b, g, token, "bench-files", int(st.Size()), nil)
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	req, _ := http.NewRequest(http.MethodPatch, g.URL+path, f)
	req.ContentLength = st.Size()
	for k, v := range map[string]string{"Tus-Resumable": "1.0.0", "Authorization": token, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		b.Fatalf("PATCH: %d", resp.StatusCode)
	}
	code, out := ckan(b, g, "resource_create", token, map[string]any{"package_id": "bench-files", "upload_id": path})
	if code != 200 {
		b.Fatalf("attach: %d %v", code, out)
	}
	return out["result"].(map[string]any)["url"].(string)
}
