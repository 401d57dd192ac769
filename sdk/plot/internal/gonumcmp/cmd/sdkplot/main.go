// Command sdkplot writes the doxorubicin plot drawn by sdk/plot (for the
// size of a wasm program that draws with it).
package main

import (
	"fmt"
	"os"

	"toxgate/sdk/plot/internal/gonumcmp/doxocase"
)

func main() {
	c, err := doxocase.Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.WriteString(doxocase.SDK(c))
}
