//go:build unix

package main

import (
	"context"
	"encoding/json"
	"testing"

	"toxgate/gateway/modulehost/wasmtest"
	"toxgate/internal/cputime"
)

// BenchmarkWasmStages runs the 1000-SMILES batch of BenchmarkWasmBatch1000
// inside wasm up to each stage of the pipeline (testdata/stages): the cost of
// a stage is the difference between consecutive rows. Besides wall time it
// reports the process CPU time per call (steadier on a shared machine; the
// module runs on the calling goroutine).
func BenchmarkWasmStages(b *testing.B) {
	m := wasmtest.Load(b, "testdata/stages")
	list := make([]string, 1000)
	for i := range list {
		list[i] = batchSMILES[i%len(batchSMILES)]
	}
	for _, stage := range []string{"parse", "describe", "morgan", "features", "gbt", "predict", "full"} {
		in, _ := json.Marshal(map[string]any{"smiles": list, "stage": stage})
		b.Run(stage, func(b *testing.B) {
			if _, err := m.Call(context.Background(), 0, in); err != nil {
				b.Fatal(err)
			}
			c0 := cputime.Process()
			for b.Loop() {
				if _, err := m.Call(context.Background(), 0, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cputime.Process()-c0)*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}
