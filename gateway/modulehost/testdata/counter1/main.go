// Command counter1 is version 1 of the "counter" test module, for hot-swap tests.
package main

import (
	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

type in struct {
	N int `json:"n"`
}

type out struct {
	Version string `json:"version"`
	Next    int    `json:"next"`
}

func init() {
	module.Register(module.Info{
		Name: "counter", Version: "1.0.0", Description: "Adds one (version 1).",
		Card: abi.ModelCard{Summary: "n+1; used to test hot swapping."},
	},
		module.Handle("/counter/next", func(i in) (out, error) { return out{Version: "1", Next: i.N + 1}, nil }).
			Output("version serving and n+1"),
	)
}

func main() {}
