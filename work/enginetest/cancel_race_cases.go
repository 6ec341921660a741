package enginetest

import (
	"sync"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// cancelRacesCompletion sends cancels as the children return, many times,
// agent children and external jobs alike, the way a coordinator's cancel
// meets a child that finishes at that moment. Whichever wins, the receipt
// tells the truth the Engine decided by: an accepted cancel reports
// cancel-requested or cancelled (terminal work is not accepted), a refused
// one the terminal state the Work ended in; a receipt that says cancelled
// is the Work's end.
func (s *suite) cancelRacesCompletion(t *testing.T) {
	const rounds, batch = 4, 10 // per round: batch/2 agent children, batch/2 jobs
	v := s.env(t, func(c *Config) { c.MaxRunning = batch })
	type race struct {
		o       work.Owner // each its own: the races do not queue behind one owner's registry
		ref     work.Ref
		label   string
		release func()
		r       work.CancelReceipt
		err     error
	}
	stop := make(chan struct{})
	defer close(stop)
	bad := 0
	for range rounds {
		races := make([]*race, batch)
		for i := range races {
			o := owner(t, "cancel-race")
			if i%2 == 0 {
				token, c := newControl(t, "")
				ref := v.start(o, Agent, token)
				v.waitStartedOf(o, ref, c)
				races[i] = &race{o: o, ref: ref, label: Agent, release: func() { v.finish(c, "done", nil) }}
				continue
			}
			input, c := newJob(t, "", true, work.Poll{State: work.PollDone, Output: "done"})
			ref := v.start(o, Job, input)
			v.waitPoll(c, 1)
			races[i] = &race{o: o, ref: ref, label: Job, release: func() {
				go func() { // the poll takes the token unless the cancel ended it first
					select {
					case c.gate <- struct{}{}:
					case <-stop:
					}
				}()
			}}
		}
		var wg sync.WaitGroup
		for _, r := range races {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.release()
				r.r, r.err = v.e.Cancel(v.ctx, r.o, r.ref.ID)
			}()
		}
		wg.Wait()
		for _, r := range races {
			st, _ := v.settle(r.o, r.ref.ID)
			if why := badReceipt(r.r, r.err, st.State); why != "" {
				bad++
				t.Errorf("%s Work %s: Cancel = %+v, %v; ended %s: %s", r.label, r.ref.ID, r.r, r.err, st.State, why)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cancels racing a completion answered wrongly", bad, rounds*batch)
	}
}

// badReceipt says what is wrong with a cancel receipt given the state the
// Work ended in ("" when nothing is).
func badReceipt(r work.CancelReceipt, err error, end observe.State) string {
	switch {
	case err != nil:
		return "an error"
	case r.Accepted && r.State != work.StateCancelRequested && r.State != work.StateCancelled:
		return "accepted, but its state is neither cancel-requested nor cancelled"
	case r.Accepted && r.State == work.StateCancelled && end != work.StateCancelled:
		return "accepted as cancelled, but the Work did not end cancelled"
	case !r.Accepted && !r.State.Terminal():
		return "refused, but its state is not terminal"
	case !r.Accepted && r.State != end:
		return "refused with a terminal state the Work did not end in"
	}
	return ""
}
