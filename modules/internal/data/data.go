// Package data embeds the data files that more than one model module reads
// (the other files here are the structure models' training data, which
// modules/internal/train reads from disk). Provenance: SOURCES.md.
package data

import _ "embed"

// HTTKChemicalsGz is the gzipped column subset of httk 2.7.4's
// chem.physical_and_invitro.data (every row; the columns pbpk-httk and
// tk-2d read).
//
//go:embed httk_chem_physical_and_invitro_subset.csv.gz
var HTTKChemicalsGz []byte
