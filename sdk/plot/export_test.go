package plot

// The reference implementation (ref_test.go) for the external tests.
var (
	RefSVG  = refSVG
	RefThin = refThin
)
