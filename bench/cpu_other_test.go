//go:build !unix

package bench

import "time"

// processCPU is not measured here: getrusage is a Unix call, so the benchmarks report no
// cpu-ns/op and the report compares wall times alone.
func processCPU() (time.Duration, bool) { return 0, false }
