// Command modbuild builds toxgate modules into WebAssembly: the go tool for
// wasip1 (with the garbage collector marking with the world stopped), then
// internal/reloop, then binaryen's wasm-opt when installed, then reloop.Finish
// (see package wasmbuild).
//
//	go run ./sdk/cmd/modbuild -o bin/modules modules          # every modules/*/ with a main.go
//	go run ./sdk/cmd/modbuild -o bin/modules modules/example-units
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"toxgate/internal/wasmbuild"
)

func main() {
	out := flag.String("o", "bin/modules", "output directory")
	cache := flag.String("cache", wasmbuild.DefaultCacheDir(), "build cache directory (\"\" builds every module anew)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: modbuild [-o dir] DIR...\n  a module DIR is built into -o/<base>.wasm; otherwise each module subdirectory of DIR is.")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if opt, _ := wasmbuild.Optimizer(ctx); opt == "" {
		fmt.Fprintln(os.Stderr, "note: wasm-opt (binaryen) not found or TOXGATE_WASM_OPT=off: modules are rewritten by reloop but not optimised (make ci-deps installs binaryen)")
	}
	for _, dir := range flag.Args() {
		if wasmbuild.IsModule(dir) {
			target := filepath.Join(*out, filepath.Base(filepath.Clean(dir))+".wasm")
			if err := wasmbuild.Install(ctx, dir, target, *cache); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println(target)
			continue
		}
		built, err := wasmbuild.All(ctx, dir, *out, *cache)
		for _, b := range built {
			fmt.Println(b)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
