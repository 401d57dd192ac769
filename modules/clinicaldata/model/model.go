// Package model holds the three clinical-trial toxicity (ClinTox CT_TOX)
// models — a classical learner (ML), a neural network (AI) and a model on
// structure plus AOP predictions (AOP) — with weights embedded, and serves
// them natively, for tests and benchmarks, and inside the module.
package model

import (
	_ "embed"

	"toxgate/modules/internal/aopfeat"
	"toxgate/modules/internal/bundles"
	"toxgate/sdk/chem"
	"toxgate/sdk/ml"
	"toxgate/sdk/ml/serve"
)

var (
	//go:embed weights.gob.gz
	weightsML []byte
	//go:embed weights-ai.gob.gz
	weightsAI []byte
	//go:embed weights-aop.gob.gz
	weightsAOP []byte
)

// ML, AI and AOP serve the three embedded bundles.
var (
	ML  = serve.MustNew(weightsML)
	AI  = serve.MustNew(weightsAI)
	AOP = newAOP()
)

// newAOP serves the AOP bundle, whose features are the structure features
// followed by the MIE, KE1, KE2 (aop-kesmies) and apical (dictrank) probabilities.
func newAOP() *serve.Server {
	s := serve.MustNew(weightsAOP)
	src, err := aopfeat.New(mustDecode(bundles.AOPKEsMIEs), mustDecode(bundles.DICTrank))
	if err != nil {
		panic(err)
	}
	nf := s.Bundle.Featurizer.NumFeatures()
	dense := make([]float32, nf)
	s.Extra = func(_ *chem.Mol, x ml.Sparse) ml.Sparse { return src.Extend(x, nf, dense) }
	return s
}

// mustDecode decodes an embedded bundle; a bad one is a build defect.
func mustDecode(weights []byte) *ml.Bundle {
	b, err := ml.DecodeBundle(weights)
	if err != nil {
		panic(err)
	}
	return b
}
