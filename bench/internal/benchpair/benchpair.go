// Package benchpair times the arms of a comparison benchmark (agentwork and
// its baseline) in alternating chunks within one benchmark run, so that
// their ratio is measured under the same machine load: on a shared machine
// absolute figures drift between runs, ratios of interleaved arms much
// less. It is used by the Goal benchmarks (make bench, make bench-check).
package benchpair

import (
	"runtime"
	"testing"
	"time"
)

// Arm is one side of a comparison.
type Arm struct {
	Name string
	// Run performs n operations and returns a function (or nil) that runs
	// afterwards, untimed: waiting for stragglers, cleanup.
	Run func(n int) (after func())
}

// Result is what one arm cost per operation over the whole run.
type Result struct {
	NsPerOp     float64
	AllocsPerOp float64 // heap allocations of the whole process during the timed part
}

// Run runs arms in alternating chunks of chunk operations until each has
// done b.N, rotating which arm goes first, and returns their costs in the
// order given. It reports "<name>-ns/op" and "<name>-allocs/op" for each.
func Run(b *testing.B, chunk int, arms ...Arm) []Result {
	b.Helper()
	res := make([]Result, len(arms))
	var elapsed = make([]time.Duration, len(arms))
	var mallocs = make([]uint64, len(arms))
	var m0, m1 runtime.MemStats
	runtime.GC()
	b.ResetTimer()
	round := 0
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		for k := range arms {
			i := (k + round) % len(arms)
			runtime.ReadMemStats(&m0)
			t := time.Now()
			after := arms[i].Run(n)
			elapsed[i] += time.Since(t)
			runtime.ReadMemStats(&m1)
			mallocs[i] += m1.Mallocs - m0.Mallocs
			if after != nil {
				after()
			}
		}
		round++
	}
	b.StopTimer()
	for i, a := range arms {
		res[i] = Result{NsPerOp: float64(elapsed[i].Nanoseconds()) / float64(b.N),
			AllocsPerOp: float64(mallocs[i]) / float64(b.N)}
		b.ReportMetric(res[i].NsPerOp, a.Name+"-ns/op")
		b.ReportMetric(res[i].AllocsPerOp, a.Name+"-allocs/op")
	}
	return res
}
