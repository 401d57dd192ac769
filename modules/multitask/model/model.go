// Package model holds the trained multi-output cardiotoxicity AOP network model (weights embedded) and serves it
// natively, for tests and benchmarks, and inside the module.
package model

import (
	_ "embed"

	"toxgate/sdk/ml/serve"
)

//go:embed weights.gob.gz
var weights []byte

// Server serves the embedded bundle.
var Server = serve.MustNew(weights)

// Weights returns the embedded bundle bytes.
func Weights() []byte { return weights }
