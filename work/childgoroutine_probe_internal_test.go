package work

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"testing"
)

// blockedInProbe reports how many goroutines wait in callerLabelled.
func blockedInProbe() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("work.callerLabelled("))
}

// TestConcurrentProbes: while one goroutine reads the goroutine
// profile for its label, others wait for the probe inside it too. Two
// labelled ones with the same stack make one record of count 2, which
// sorts first: the unlabelled prober must still be told it is not
// labelled (else its Close would be refused as a child's).
func TestConcurrentProbes(t *testing.T) {
	const v = "review-probe"
	labelled := pprof.WithLabels(context.Background(), pprof.Labels(ProfileLabel, v))
	probeMu.Lock()
	type answer struct{ labelled, told bool }
	got := make(chan answer, 3)
	probe := func(lab bool) {
		if lab {
			pprof.SetGoroutineLabels(labelled)
		}
		got <- answer{lab, callerLabelled(v)}
	}
	waitBlocked := func(n int) {
		for blockedInProbe() < n {
			runtime.Gosched()
		}
	}
	go probe(false) // first in line: it probes while the others wait
	waitBlocked(1)
	for range 2 {
		go probe(true)
	}
	waitBlocked(3)
	probeMu.Unlock()
	for range 3 {
		if a := <-got; a.labelled != a.told {
			t.Errorf("a goroutine labelled %v was told %v", a.labelled, a.told)
		}
	}
}
