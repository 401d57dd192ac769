// Command reloop rewrites a Go-built WebAssembly module so that jumps inside
// its functions are direct branches (see package toxgate/internal/reloop), and,
// with -finish, applies the last step of a build, after wasm-opt
// (reloop.Finish).
//
//	go run ./sdk/cmd/reloop -o out.wasm in.wasm
//	wasm-opt -O2 ... out.wasm -o out.wasm
//	go run ./sdk/cmd/reloop -finish out.wasm
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"

	"toxgate/internal/reloop"
)

func main() {
	out := flag.String("o", "", "output file (default: rewrite the input in place)")
	verbose := flag.Bool("v", false, "list the functions left as they were, and why")
	finish := flag.Bool("finish", false, "apply only the finishing rewrites (run last, after wasm-opt)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: reloop [-v] [-finish] [-o out.wasm] in.wasm")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	in := flag.Arg(0)
	if *out == "" {
		*out = in
	}
	b, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *finish {
		nb, st, err := reloop.Finish(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(*out, nb, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d frame slot addresses folded, %d argument reads from locals, %d frame accesses through the frame base, %d small memory.fill/copy expanded, %d pointer conversions reused, %d elses added, %d probes (%d bodies, %d not decoded), %d -> %d bytes\n",
			*out, st.FrameFolds, st.ArgReads, st.FrameRebases, st.MemOps, st.WrapReuses, st.Elses, st.Probes, st.Bodies, st.Undecodable, len(b), len(nb))
		return
	}
	nb, st, err := reloop.Module(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if st.Already {
		fmt.Printf("%s: already rewritten by reloop\n", in)
	}
	if err := os.WriteFile(*out, nb, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d of %d functions rewritten (%d skipped), %d jumps made direct (%d left to the jump table), %d -> %d bytes\n",
		*out, st.Rewritten, st.Functions, st.Skipped, st.Jumps, st.SlowJumps, st.InBytes, st.OutBytes)
	if *verbose {
		names, err := reloop.BodyNames(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading function names:", err)
		}
		for _, s := range st.SkippedBodies {
			fmt.Printf("skipped %d %s: %s\n", s.Body, names[s.Body], s.Reason)
		}
		bodies := slices.Sorted(maps.Keys(st.SlowJumpsByBody))
		for _, b := range bodies {
			fmt.Printf("jump table kept for %d edges: %d %s\n", st.SlowJumpsByBody[b], b, names[b])
		}
	}
}
