package bench

import (
	"testing"
)

// cpuUnit is the unit of the metric every benchmark reports beside ns/op: the process's CPU
// time per operation. The report reads it by this name.
const cpuUnit = "cpu-ns/op"

// measureCPU starts counting the process's CPU time and returns the function that reports it
// per operation as cpu-ns/op. Call it just before the timed loop and what it returns just
// after, so that the count covers the loop and nothing else:
//
//	report := measureCPU(b)
//	for b.Loop() { … }
//	report()
//
// Wall time counts whatever else the machine did while the loop ran; CPU time counts only
// this process's work, so on a shared machine the two disagree, and the report shows both.
func measureCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		end, ok2 := processCPU()
		// b.N is the loop's iteration count once b.Loop has returned false.
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), cpuUnit)
		}
	}
}
