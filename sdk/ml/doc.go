// Package ml is the shared learning toolkit of toxgate's structure-based
// models. It turns SMILES into features with sdk/chem (the same code at training
// and at serving time), trains logistic regression, gradient-boosted trees and
// small multilayer perceptrons, cross-validates them with random and
// Bemis–Murcko scaffold splits, scores ROC-AUC, PR-AUC and balanced accuracy,
// chooses decision thresholds, checks the applicability domain by Dice
// similarity of Morgan fingerprints and serialises everything into a compact
// gzip-compressed gob bundle that a module embeds with //go:embed.
//
// It is pure Go and builds for GOOS=wasip1 GOARCH=wasm.
package ml
