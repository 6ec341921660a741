package restate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// TestJobFailedClass: a failed poll's class is the Work's when it is a
// class name; text (or an id) in its place fails the Work as error, as
// in-process (driver.Await): a class reaches telemetry, never content.
func TestJobFailedClass(t *testing.T) {
	const text = "Quota exceeded for account 42"
	job := func(class string) *work.Job {
		return &work.Job{
			Submit: func(context.Context, string, string) ([]byte, error) { return []byte("h"), nil },
			Await: func(context.Context, []byte) (work.Poll, error) {
				return work.Poll{State: work.PollFailed, Class: class}, nil
			},
			Backoff: work.Backoff{Initial: 10 * time.Millisecond, Max: 10 * time.Millisecond},
		}
	}
	jobs := map[string]*work.Job{"named": job("quota"), "text": job(text)}
	e := deploy(t, map[string]restate.Child{"named": {Kind: work.KindFunction, Job: jobs["named"]}, "text": {Kind: work.KindFunction, Job: jobs["text"]}})
	o := work.NewOwner(fmt.Sprintf("jobclass-%d", time.Now().UnixNano()))
	for label, want := range map[string]string{"named": "quota", "text": work.ClassError} {
		ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: label, Kind: work.KindFunction}, Job: jobs[label],
			Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := settle(t, e, o, ref.ID); st.State != work.StateFailed || st.Class != want {
			t.Errorf("%s: settled %s (class %q), want failed (class %q)", label, st.State, st.Class, want)
		}
	}
}

// TestJobCancelPanics: a job whose Cancel panics is cancelled all the
// same (the panic is the service's; the Work ends as decided), as
// in-process and on Temporal (driver.CancelJob).
func TestJobCancelPanics(t *testing.T) {
	polled := make(chan struct{}, 1)
	job := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte("h"), nil },
		Await: func(context.Context, []byte) (work.Poll, error) {
			select {
			case polled <- struct{}{}:
			default:
			}
			return work.Poll{}, nil
		},
		Cancel:  func(context.Context, []byte) error { panic("cancel") },
		Backoff: work.Backoff{Initial: 10 * time.Millisecond, Max: 10 * time.Millisecond},
	}
	e := deploy(t, map[string]restate.Child{"job": {Kind: work.KindFunction, Job: job}})
	o := work.NewOwner(fmt.Sprintf("jobcancel-%d", time.Now().UnixNano()))
	ref, err := e.Start(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "job", Kind: work.KindFunction}, Job: job,
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-polled
	if _, err := e.Cancel(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := settle(t, e, o, ref.ID); st.State != work.StateCancelled {
		t.Fatalf("settled %s (class %q), want cancelled", st.State, st.Class)
	}
}
