// Package model holds the trained apical cardiotoxicity and FDA DICTrank concern classifiers (weights embedded) and serves it
// natively, for tests and benchmarks, and inside the module.
package model

import (
	"toxgate/modules/internal/bundles"
	"toxgate/sdk/ml/serve"
)

// weights is the bundle, embedded in modules/internal/bundles because
// clinicaldata reads it too.
var weights = bundles.DICTrank

// Server serves the embedded bundle.
var Server = serve.MustNew(weights)

// Weights returns the embedded bundle bytes.
func Weights() []byte { return weights }
