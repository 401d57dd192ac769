// Command chemnative is the native side of BenchmarkChemPipeline: the
// chembench pipeline run by a process of its own, so that Go's garbage
// collector runs at the pace of a program whose heap holds only the
// pipeline's data, as it does in the chembench module. (Native code run
// inside the benchmark's process shares a heap of 100+ MB, mostly wazero's
// compiled modules: at the default GOGC its collector runs about once every
// 20,000 molecules instead of every ~850.)
//
// It reads the SMILES, one per line, from the file named by its first
// argument and splits them into batches of the size given by the second (the
// module's calls). It then answers each line "STAGE N" on its standard input
// ("all" for the whole pipeline) by running the pipeline N times over every
// batch, and writes one line: the CPU seconds the runs took (user and system,
// of this process: the collector's work included), the molecules processed
// in the last run and the sum of the batches' checksums in that run.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"toxgate/internal/chembench"
	"toxgate/internal/cputime"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chemnative: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: chemnative SMILES-FILE BATCH-SIZE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	size, err := strconv.Atoi(os.Args[2])
	if err != nil || size <= 0 {
		fail("batch size %q: want a positive integer", os.Args[2])
	}
	smiles := strings.Fields(string(data))
	var batches [][]string
	for i := 0; i < len(smiles); i += size {
		batches = append(batches, smiles[i:min(i+size, len(smiles))])
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var stage string
		var n int
		if _, err := fmt.Sscan(in.Text(), &stage, &n); err != nil || n <= 0 {
			fail("line %q: want \"STAGE N\"", in.Text())
		}
		if stage == "all" {
			stage = ""
		}
		var mols int
		var sum uint64
		c0 := cputime.Process()
		for range n {
			mols, sum = 0, 0
			for _, b := range batches {
				r := chembench.Run(b, stage)
				mols, sum = mols+r.N, sum+r.Sum
			}
		}
		fmt.Printf("%.6f %d %d\n", cputime.Process()-c0, mols, sum)
	}
}
