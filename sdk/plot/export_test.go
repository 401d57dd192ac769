package plot

// The reference implementation of Thin (ref_test.go) for the external tests.
var RefThin = refThin
