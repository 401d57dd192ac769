// Package cputime reads the CPU time of the running process: the measure of
// toxgate's benchmarks, steadier than the wall clock on a shared machine, and
// inclusive of the garbage collector's work on other threads.
package cputime
