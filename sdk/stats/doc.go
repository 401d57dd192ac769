// Package stats holds the small statistics the TK/TD models share: Welch's
// t-test with exact Student-t p-values, Benjamini–Hochberg q-values, a
// two-parameter Hill (log-logistic) least-squares fit with standard errors, and
// a Gaussian-kernel local-linear smoother. Pure Go, no allocation-heavy
// dependencies; builds for GOOS=wasip1.
package stats
