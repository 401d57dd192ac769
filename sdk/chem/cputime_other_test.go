//go:build !unix

package chem

// processCPUSeconds is unavailable here; benchmarks skip the CPU metric.
func processCPUSeconds() float64 { return 0 }
