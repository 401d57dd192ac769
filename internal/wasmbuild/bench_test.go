package wasmbuild

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"toxgate/internal/cputime"
)

// BenchmarkCollectorSetting measures what GuestGODEBUG does: it builds
// testdata/gcbench (sdk/chem's pipeline over the 3000 reference SMILES, in
// batches of 500) with Build, instantiates it twice under wazero, once as
// built (collector marking with the world stopped) and once with
// GODEBUG=gcstoptheworld=0 in its environment (Go's concurrent collector),
// and lets the two take turns, 8 rounds of b.N passes each. It reports each
// instance's molecules per CPU-second in its fastest round, the ratio of
// the fastest rounds' times stw/concurrent (below 1 when the setting helps)
// and the median of the rounds' ratios. Run with
//
//	go test -run '^$' -bench CollectorSetting -benchtime 3x -cpu 1 ./internal/wasmbuild/
func BenchmarkCollectorSetting(b *testing.B) {
	ctx := context.Background()
	out := filepath.Join(b.TempDir(), "gcbench.wasm")
	if err := Build(ctx, "testdata/gcbench", out); err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	fs := wazero.NewFSConfig().WithReadOnlyDirMount("../../sdk/chem/testdata", "/data")
	start := func(godebug string) api.Function {
		cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").WithFSConfig(fs)
		if godebug != "" {
			cfg = cfg.WithEnv("GODEBUG", godebug)
		}
		mod, err := rt.InstantiateModule(ctx, cm, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := mod.ExportedFunction("load").Call(ctx); err != nil || res[0] != 3000 {
			b.Fatalf("load: %v, %v SMILES (want 3000)", err, res)
		}
		run := mod.ExportedFunction("run")
		if res, err := run.Call(ctx); err != nil || res[0] != 3000 {
			b.Fatalf("run: %v, %v molecules parsed (want 3000)", err, res)
		}
		return run
	}
	sides := []api.Function{start(""), start("gcstoptheworld=0")}
	cpu := make([][]float64, len(sides))
	b.ResetTimer()
	for range 8 {
		for i, run := range sides {
			c0 := cputime.Process()
			for range b.N {
				if _, err := run.Call(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu[i] = append(cpu[i], cputime.Process()-c0)
		}
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	if slices.Min(cpu[1]) <= 0 {
		return // no CPU time on this platform
	}
	mols := float64(3000 * b.N)
	b.ReportMetric(mols/slices.Min(cpu[0]), "stw-mol/cpu-s")
	b.ReportMetric(mols/slices.Min(cpu[1]), "concurrent-mol/cpu-s")
	b.ReportMetric(slices.Min(cpu[0])/slices.Min(cpu[1]), "stw/concurrent")
	ratios := make([]float64, len(cpu[0]))
	for r := range ratios {
		ratios[r] = cpu[0][r] / cpu[1][r]
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "stw/concurrent-median")
}
