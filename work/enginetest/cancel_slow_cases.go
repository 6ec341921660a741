package enginetest

import (
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// cancelSlowCall cancels running children whose call in progress (a slow
// model reply, a long tool) does not watch its context and lasts past the
// Engine's liveness timeout: the cancel is cooperative, so the Work stays
// cancel-requested while the call lasts, and then ends as the child
// decides (cancelled when it returns its context's error, completed when
// it returns an output: the completion wins), never failed as if its
// worker were lost.
func (s *suite) cancelSlowCall(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "slow")
	hold := 500 * time.Millisecond
	if s.caps.LivenessTimeout > 0 {
		hold = 2 * s.caps.LivenessTimeout
	}
	type run struct {
		mode  string
		want  observe.State
		out   string
		ref   work.Ref
		c     *control
		took  time.Duration
		ended time.Time
	}
	runs := []*run{
		{mode: "slow", want: work.StateCancelled},
		{mode: "slow-complete", want: work.StateCompleted, out: SlowOutput},
	}
	for i, r := range runs {
		label := Agent
		if i == 1 {
			label = Func
		}
		token, c := newControl(t, r.mode)
		c.hold = hold
		r.ref, r.c = v.start(o, label, token), c
	}
	for _, r := range runs {
		v.waitStartedOf(o, r.ref, r.c)
	}
	for _, r := range runs {
		cr, err := v.e.Cancel(t.Context(), o, r.ref.ID)
		if err != nil || !cr.Accepted || cr.State != work.StateCancelRequested {
			t.Fatalf("Cancel(%s) = %+v, %v; want accepted, cancel-requested", r.mode, cr, err)
		}
		at := time.Now()
		select {
		case err := <-r.c.ended:
			if err == nil {
				t.Fatalf("%s: the child returned with its context not cancelled", r.mode)
			}
		case <-time.After(patience):
			t.Fatalf("%s: the cancel did not reach the child within %s", r.mode, patience)
		}
		r.ended = time.Now()
		r.took = r.ended.Sub(at)
	}
	for _, r := range runs {
		// Liveness is checked by at least one beat per third of the
		// timeout; the cancel rides on the next one.
		if lt := s.caps.LivenessTimeout; lt > 0 && r.took > lt {
			t.Errorf("%s: the cancel took %v to reach the child, more than the liveness timeout %v", r.mode, r.took, lt)
		}
		if time.Since(r.ended) > hold/2 {
			continue // too late to see the call in progress
		}
		if st := v.status(o, r.ref.ID); st.State.Terminal() {
			t.Fatalf("%s: %s while the child's call lasts, want cancel-requested", r.mode, st.State)
		}
	}
	for _, r := range runs {
		st, out := v.settle(o, r.ref.ID)
		if st.State != r.want || out != r.out {
			t.Errorf("%s: a child whose call outlasted the liveness timeout after a cancel ended %s %q (class %q), want %s %q",
				r.mode, st.State, out, v.failClass(r.ref.ID), r.want, r.out)
		}
	}
}

// failClass is the error class of Work id's last failed event, if any.
func (v *env) failClass(id string) string {
	class := ""
	for _, e := range v.rec.Events() {
		if e.WorkID == id && e.ErrorClass != "" {
			class = e.ErrorClass
		}
	}
	return class
}
