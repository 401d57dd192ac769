// Package data embeds the httk 2.7.4 tables used by the pbtk model alone
// (see SOURCES.md for provenance). The chemical table, which tk-2d reads
// too, is modules/internal/data's HTTKChemicalsGz.
package data

import _ "embed"

// Physiology is httk's physiology.data (CSV: Parameter, Units, one column per species).
//
//go:embed physiology.csv
var Physiology []byte

// Tissue is httk's tissue.data in long format (Tissue, Species, Reference, variable, value).
//
//go:embed tissue.csv
var Tissue []byte

// Pearce2017Regression holds the per-tissue calibration of Schmitt partition
// coefficients (Pearce et al. 2017).
//
//go:embed pearce2017regression.csv
var Pearce2017Regression []byte
