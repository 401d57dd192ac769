// Command gonum writes the doxorubicin plot drawn by gonum/plot (for the
// size of a wasm program that draws with it).
package main

import (
	"fmt"
	"os"

	"toxgate/sdk/plot/internal/gonumcmp"
	"toxgate/sdk/plot/internal/gonumcmp/doxocase"
)

func main() {
	c, err := doxocase.Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := gonumcmp.Gonum(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
