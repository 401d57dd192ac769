// Package model holds the trained hERG blocker classifier (weights embedded)
// and serves it natively, for tests and benchmarks, and inside the module.
package model

import (
	_ "embed"

	"toxgate/sdk/ml/serve"
)

//go:embed weights.gob.gz
var weights []byte

// Server serves the embedded hERG bundle.
var Server = serve.MustNew(weights)
