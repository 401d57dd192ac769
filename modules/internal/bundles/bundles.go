// Package bundles embeds the trained weight bundles that more than one
// module reads: aop-kesmies' (MIE, KE1, KE2) and dictrank's (apical,
// DICTrank), which their own modules serve and clinicaldata's AOP model
// reads for its features (modules/internal/aopfeat). modules/internal/train
// writes them here; their cross-validation reports stay in the modules'
// model folders. A module links only the bundles it names.
package bundles

import _ "embed"

// AOPKEsMIEs is the aop-kesmies bundle (sdk/ml's gzip-compressed gob).
//
//go:embed aop-kesmies.gob.gz
var AOPKEsMIEs []byte

// DICTrank is the dictrank bundle (sdk/ml's gzip-compressed gob).
//
//go:embed dictrank.gob.gz
var DICTrank []byte
