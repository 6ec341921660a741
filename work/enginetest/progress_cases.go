package enginetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

type progressReq struct {
	done, total int64
	reported    chan struct{}
}

// reportProgress has the controlled child report progress counts
// (work.ReportProgress) and waits until it did.
func (v *env) reportProgress(c *control, done, total int64) {
	v.t.Helper()
	p := progressReq{done: done, total: total, reported: make(chan struct{})}
	select {
	case c.progress <- p:
	case <-time.After(patience):
		v.t.Fatalf("the child did not take the progress report within %s", patience)
	}
	<-p.reported
}

// progress: a running Work's Status shows the progress counts its child
// reported last (an engine may carry them there a little later, within
// its liveness period), and the settled Work keeps the last ones.
func (s *suite) progress(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "progress")
	ref, c := v.running(o, Func, "")
	shows := func(done int64) {
		t.Helper()
		v.eventually("Status shows the reported progress", func() bool {
			st := v.status(o, ref.ID)
			return st.Progress.Done == done && st.Progress.Total == 10
		})
		if st := v.status(o, ref.ID); st.State.Terminal() {
			t.Fatalf("progress shown, but the Work is %s", st.State)
		}
	}
	v.reportProgress(c, 3, 10)
	shows(3)
	v.reportProgress(c, 7, 10)
	shows(7)
	v.finish(c, "counted", nil)
	st, out := v.settle(o, ref.ID)
	if out != "counted" || st.Progress.Done != 7 || st.Progress.Total != 10 {
		t.Fatalf("settled: %+v %q; want its last progress, 7 of 10", st.Progress, out)
	}
}

// progressOrder: a Work's events open with queued and then running, and
// its child's progress comes after them, even when the child reports
// progress as its very first act. Many Works start at once, each on a
// free slot, so that an Engine that lets a child run before its queued
// and running events are delivered shows it. An Engine with a liveness
// timeout (a durable runner) runs 8 rounds, not 32: its Work's events
// come from one history each, and 256 Works through one owner's registry
// on a loaded 2-core machine starve an in-process test server's
// heartbeats (its Works then end lost, which is no order defect).
func (s *suite) progressOrder(t *testing.T) {
	const n = 8
	rounds := 32
	if s.caps.LivenessTimeout > 0 {
		rounds = 8
	}
	v := s.env(t, func(c *Config) { c.MaxRunning, c.MaxOutstanding = n, n })
	o := owner(t, "progress-order")
	bad, progressed := 0, 0
	for range rounds {
		refs := make([]work.Ref, n)
		ctls := make([]*control, n)
		for i := range n {
			token, c := newControl(t, "")
			c.progressAtStart = true
			refs[i], ctls[i] = v.start(o, Func, token), c
		}
		for i := range n {
			v.waitStartedOf(o, refs[i], ctls[i])
			v.finish(ctls[i], "done", nil)
		}
		for _, ref := range refs {
			if st, out := v.settle(o, ref.ID); st.State != work.StateCompleted || out != "done" {
				t.Fatalf("Work %s settled %s (class %q, attempt %d, started %v) with %q, want completed", ref.ID, st.State, st.Class, st.Attempt, !st.StartedAt.IsZero(), out)
			}
		}
		v.eventually("every terminal event", func() bool {
			by := byWork(v.rec.Events())
			for _, ref := range refs {
				if !hasTerminal(by[ref.ID]) {
					return false
				}
			}
			return true
		})
		by := byWork(v.rec.Events())
		for _, ref := range refs {
			evs := by[ref.ID]
			if hasType(evs, observe.EventProgress) {
				progressed++
			}
			if why := badOpening(evs); why != "" {
				bad++
				if bad <= 3 {
					t.Errorf("Work %s: %s\n%s", ref.ID, why, describe(evs))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d Works: events out of order", bad, rounds*n)
	}
	if progressed == 0 {
		t.Errorf("no Work's progress event reached the Observer (of %d children that reported progress)", rounds*n)
	}
}

// badOpening says what is wrong with the opening of a Work's events
// ("" when nothing is): the first is its queued transition, and its
// running transition comes before any progress event.
func badOpening(evs []observe.Event) string {
	running := -1
	for i, e := range evs {
		switch {
		case i == 0 && (e.Type != observe.EventQueued || e.To != work.StateQueued):
			return fmt.Sprintf("first event %s, want queued", e.Type)
		case e.Type == observe.EventRunning && running < 0:
			running = i
		case e.Type == observe.EventProgress && running < 0:
			return fmt.Sprintf("progress event %d before the running event", i)
		}
	}
	if running < 0 {
		return "no running event"
	}
	return ""
}
