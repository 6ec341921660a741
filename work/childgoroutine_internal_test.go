package work

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"testing"
)

// TestLabelledIn: the profile reader matches the probing goroutine's
// record only, and the label's value exactly (12 is not 1).
func TestLabelledIn(t *testing.T) {
	const fn = "example.com/m/work.callerLabelled"
	profile := "goroutine profile: total 3\n" +
		"1 @ 0x1 0x2\n# labels: {\"agentwork.supervisor\":\"1\"}\n#\t0x1\tother.f+0x10\t/x.go:1\n\n" +
		"1 @ 0x3 0x4\n# labels: {\"a\":\"b\", \"agentwork.supervisor\":\"12\"}\n#\t0x3\t" + fn + "+0x20\t/y.go:2\n#\t0x4\tmain.main+0x5\t/z.go:3\n\n" +
		"1 @ 0x5\n#\t0x5\t" + fn + "er+0x1\t/w.go:4\n\n"
	for _, c := range []struct {
		v    string
		want bool
	}{{"12", true}, {"1", false}, {"2", false}, {"b", false}} {
		if got := labelledIn([]byte(profile), fn, c.v); got != c.want {
			t.Errorf("labelledIn(%q) = %v, want %v", c.v, got, c.want)
		}
	}
	if labelledIn([]byte("1 @ 0x5\n#\t0x5\t"+fn+"+0x1\t/w.go:4\n\n"), fn, "12") {
		t.Error("a record without labels matched")
	}
}

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
	const v = "concurrent-probe"
	labelled := pprof.WithLabels(context.Background(), pprof.Labels(profileLabel, v))
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
