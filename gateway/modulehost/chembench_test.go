//go:build unix

package modulehost

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/internal/chembench"
	"toxgate/internal/cputime"
)

const (
	chemBenchDir  = "testdata/chembench"
	chemNativeDir = "./testdata/chemnative"
	chemRefCSV    = "../../sdk/chem/testdata/rdkit_descriptors_tox21_3000.csv"
	// chemBatch is the number of SMILES per module call.
	chemBatch = 500
)

// chemOut is the answer of the chembench module's route.
type chemOut = chembench.Result

// chemPipeline is the pipeline the chembench module runs, run natively.
func chemPipeline(smiles []string, stage string) chemOut { return chembench.Run(smiles, stage) }

func chemSMILES(tb testing.TB) []string {
	f, err := os.Open(chemRefCSV)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "smiles" {
			col = i
		}
	}
	if col < 0 {
		tb.Fatal("no smiles column in " + chemRefCSV)
	}
	var out []string
	for _, r := range recs[1:] {
		out = append(out, r[col])
	}
	return out
}

// TestChemModuleMatchesNative runs sdk/chem inside the chembench module, as
// make builds it, over the 3000 reference SMILES and checks that every batch
// gives the counts and checksum of the same pipeline run natively (every
// descriptor and fingerprint bit goes into the checksum). The module's build
// of sdk/chem has its own forms of the scratch pools and caches
// (shared_wasm.go); two passes run them cold and warm.
func TestChemModuleMatchesNative(t *testing.T) {
	ctx := context.Background()
	m, err := wasmrt.Load(ctx, modtest.Wasm(t, chemBenchDir), wasmrt.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Retire(ctx)
	smiles := chemSMILES(t)
	for pass := range 2 {
		for _, stage := range []string{"", "parse", "describe"} {
			for i := 0; i < len(smiles); i += chemBatch {
				batch := smiles[i:min(i+chemBatch, len(smiles))]
				in, _ := json.Marshal(map[string]any{"smiles": batch, "stage": stage})
				res, err := m.Call(ctx, 0, in)
				if err != nil {
					t.Fatalf("pass %d, stage %q, batch %d: %v", pass, stage, i/chemBatch, err)
				}
				var got chemOut
				if err := json.Unmarshal(res, &got); err != nil {
					t.Fatalf("%v: %s", err, res)
				}
				if want := chemPipeline(batch, stage); got != want || want.Failed != 0 {
					t.Fatalf("pass %d, stage %q, batch %d: module %+v, native %+v", pass, stage, i/chemBatch, got, want)
				}
			}
		}
	}
}

// BenchmarkChemPipeline runs sdk/chem's ParseSMILES + Describe + Morgan(2, 2048)
// over the 3000 reference SMILES of sdk/chem/testdata, natively and inside the
// chembench test module through wasmrt (batches of chemBatch SMILES per call,
// JSON in and out), in the same run. One op is one pass over the 3000
// molecules on each side.
//
// The native baseline is a process of its own (testdata/chemnative, built by
// go build and run with this benchmark's GOMAXPROCS) that runs the same
// batches: Go's garbage collector then works at the pace of a program holding
// only the pipeline's data, as in the module. The same code run inside this
// benchmark's process shares a heap of 100+ MB (wazero's compiled modules):
// its collector runs about once every 20,000 molecules instead of every ~850.
// It is reported too, as native-inproc.
//
// It reports molecules per second (wall clock, and per CPU-second, which is
// steadier on a shared machine), the ratio wasm/native of CPU time per
// molecule, and the cost of a call with an empty batch (the per-call overhead
// that the batches amortise). The module is the one make builds (Go's
// collector marking with the world stopped, rewritten by internal/reloop,
// optimised by wasm-opt when installed, then finished by reloop.Finish);
// wasm-opt/native, wasm-reloop/native and wasm-go/native are the same ratio,
// in the same run, for the module not finished, rewritten by reloop only, and
// exactly as the go tool writes it (collector included). wasm/native-inproc
// is the module against the native code run in this process. The builds take
// turns, TOXGATE_CHEM_ROUNDS rounds (5) of one op each; every figure is from
// each build's fastest round, and wasm/native-cpu-median is the median of the
// rounds' ratios. Run on one core with
//
//	go test -run XXX -bench ChemPipeline -benchtime 3x -cpu 1 ./gateway/modulehost/
func BenchmarkChemPipeline(b *testing.B) { chemBench(b, "") }

// BenchmarkChemStages is BenchmarkChemPipeline stopped after parsing, and
// after the descriptors, to see which stage the module amplifies most; the
// stages loop and calls run no sdk/chem code but a plain hash loop over the
// SMILES bytes, without and with a function call per byte: the floor of the
// wasm/native ratio for straight-line Go code and for call-heavy Go code.
func BenchmarkChemStages(b *testing.B) {
	for _, stage := range []string{"parse", "describe", "loop", "calls"} {
		b.Run(stage, func(b *testing.B) { chemBench(b, stage) })
	}
}

// chemRounds is the number of turns each build takes in chemBench:
// TOXGATE_CHEM_ROUNDS, 5 by default.
func chemRounds() int {
	if n, err := strconv.Atoi(os.Getenv("TOXGATE_CHEM_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

func chemBench(b *testing.B, stage string) {
	ctx := context.Background()
	smiles := chemSMILES(b)
	// The module as make builds it (reloop, wasm-opt, reloop.Finish), and as
	// same-run baselines: not finished, rewritten by reloop only, and as the go
	// tool writes it.
	mod, modOpt := loadBench(b, modtest.Wasm(b, chemBenchDir)), loadBench(b, modtest.WasmOpt(b, chemBenchDir))
	modReloop, modGo := loadBench(b, modtest.WasmReloop(b, chemBenchDir)), loadBench(b, modtest.WasmGo(b, chemBenchDir))
	var inputs [][]byte
	var batches [][]string
	for i := 0; i < len(smiles); i += chemBatch {
		batch := smiles[i:min(i+chemBatch, len(smiles))]
		req := map[string]any{"smiles": batch}
		if stage != "" {
			req["stage"] = stage
		}
		in, _ := json.Marshal(req)
		inputs, batches = append(inputs, in), append(batches, batch)
	}
	call := func(m *wasmrt.Module, in []byte) chemOut {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res, err := m.Call(cctx, 0, in)
		if err != nil {
			b.Fatal(err)
		}
		var o chemOut
		if err := json.Unmarshal(res, &o); err != nil {
			b.Fatalf("%v: %s", err, res)
		}
		return o
	}
	// Warm all three up and check that they compute the same thing.
	for i, in := range inputs {
		want := chemPipeline(batches[i], stage)
		if got := call(mod, in); got != want {
			b.Fatalf("batch %d: module %+v, native %+v", i, got, want)
		}
		if got := call(modGo, in); got != want {
			b.Fatalf("batch %d: module as Go built it %+v, native %+v", i, got, want)
		}
		if got := call(modReloop, in); got != want {
			b.Fatalf("batch %d: module rewritten by reloop only %+v, native %+v", i, got, want)
		}
		if got := call(modOpt, in); got != want {
			b.Fatalf("batch %d: module not finished %+v, native %+v", i, got, want)
		}
		if want.Failed != 0 && stage != "loop" && stage != "calls" {
			b.Fatalf("batch %d: %d SMILES refused", i, want.Failed)
		}
	}
	child := startChemNative(b, smiles)
	var wantMols int
	var wantSum uint64
	for _, batch := range batches {
		r := chemPipeline(batch, stage)
		wantMols, wantSum = wantMols+r.N, wantSum+r.Sum
	}
	if got := child.run(b, stage, 1); got.mols != wantMols || got.sum != wantSum {
		b.Fatalf("native process: %d molecules, checksum %d; in this process %d, %d", got.mols, got.sum, wantMols, wantSum)
	}
	empty := []byte(`{"smiles":[]}`)
	const emptyCalls = 200
	call(mod, empty)

	// run times one pass of every batch: wall and CPU seconds.
	run := func(pass func()) (wall, cpu float64) {
		c0, t0 := cputime.Process(), time.Now()
		for range b.N {
			pass()
		}
		return time.Since(t0).Seconds(), cputime.Process() - c0
	}
	module := func(m *wasmrt.Module) func() {
		return func() {
			for _, in := range inputs {
				call(m, in)
			}
		}
	}
	// The builds take turns, chemRounds rounds of one pass each: a burst of
	// load from elsewhere on a shared machine slows one round of one build,
	// and the fastest round of each build (and the median of the per-round
	// ratios) leaves it out.
	// builds[0] is the native process, whose CPU time it reports itself.
	builds := []struct {
		name string
		pass func()
	}{{"native", nil}, {"wasm", module(mod)}, {"wasm-opt", module(modOpt)}, {"wasm-reloop", module(modReloop)},
		{"wasm-go", module(modGo)}, {"native-inproc", func() {
			for _, batch := range batches {
				chemPipeline(batch, stage)
			}
		}}}
	inproc := len(builds) - 1
	wall := make([][]float64, len(builds))
	cpu := make([][]float64, len(builds))
	b.ResetTimer()
	for range chemRounds() {
		for i, bld := range builds {
			if bld.pass == nil {
				t0 := time.Now()
				c := child.run(b, stage, b.N).cpu
				wall[i], cpu[i] = append(wall[i], time.Since(t0).Seconds()), append(cpu[i], c)
				continue
			}
			w, c := run(bld.pass)
			wall[i], cpu[i] = append(wall[i], w), append(cpu[i], c)
		}
	}
	t2 := time.Now()
	for range emptyCalls {
		call(mod, empty)
	}
	t3 := time.Now()
	mols := float64(b.N * len(smiles))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mols/slices.Min(wall[0]), "native-mol/s")
	b.ReportMetric(mols/slices.Min(wall[1]), "wasm-mol/s")
	cpuOK := slices.Min(cpu[0]) > 0
	if cpuOK {
		b.ReportMetric(mols/slices.Min(cpu[0]), "native-mol/cpu-s")
		b.ReportMetric(mols/slices.Min(cpu[1]), "wasm-mol/cpu-s")
	}
	for i := 1; i < inproc; i++ {
		name := builds[i].name
		b.ReportMetric(slices.Min(wall[i])/slices.Min(wall[0]), name+"/native")
		if cpuOK {
			b.ReportMetric(slices.Min(cpu[i])/slices.Min(cpu[0]), name+"/native-cpu")
		}
	}
	if cpuOK && slices.Min(cpu[inproc]) > 0 {
		b.ReportMetric(mols/slices.Min(cpu[inproc]), "native-inproc-mol/cpu-s")
		b.ReportMetric(slices.Min(cpu[1])/slices.Min(cpu[inproc]), "wasm/native-inproc-cpu")
	}
	if cpuOK {
		ratios := make([]float64, len(cpu[1]))
		for r := range ratios {
			ratios[r] = cpu[1][r] / cpu[0][r]
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "wasm/native-cpu-median")
	}
	b.StopTimer()
	b.ReportMetric(float64(t3.Sub(t2).Microseconds())/emptyCalls, "call-overhead-µs")
}

// chemNative is the native baseline process of chemBench (testdata/chemnative).
type chemNative struct {
	in  io.Writer
	out *bufio.Reader
}

// chemNativeRun is the answer of chemnative to one request.
type chemNativeRun struct {
	cpu  float64
	mols int
	sum  uint64
}

// startChemNative builds testdata/chemnative for this machine and starts it
// on smiles in batches of chemBatch, with this process's GOMAXPROCS; it stops
// with the benchmark.
func startChemNative(b *testing.B, smiles []string) *chemNative {
	dir := b.TempDir()
	bin, list := filepath.Join(dir, "chemnative"), filepath.Join(dir, "smiles.txt")
	build := exec.Command("go", "build", "-o", bin, chemNativeDir)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", chemNativeDir, err, out)
	}
	if err := os.WriteFile(list, []byte(strings.Join(smiles, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, list, strconv.Itoa(chemBatch))
	// as many cores as this benchmark: one with -cpu 1
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(runtime.GOMAXPROCS(0)))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close() // chemnative ends at the end of its input
		cmd.Wait()
	})
	return &chemNative{in: in, out: bufio.NewReader(out)}
}

// run has the process run the pipeline up to stage n times over every batch.
func (c *chemNative) run(b *testing.B, stage string, n int) chemNativeRun {
	if stage == "" {
		stage = "all"
	}
	if _, err := fmt.Fprintf(c.in, "%s %d\n", stage, n); err != nil {
		b.Fatalf("native process: %v", err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		b.Fatalf("native process: %v", err)
	}
	var r chemNativeRun
	if _, err := fmt.Sscan(line, &r.cpu, &r.mols, &r.sum); err != nil {
		b.Fatalf("native process answered %q: %v", line, err)
	}
	return r
}
