package restate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// A negative limit option (or an invalid budget option) is refused as by
// the in-process engine, before Restate is reached: every Start, Call and
// SetPool of the Engine returns it (work.ErrInvalidLimit naming the
// option), and NewWorker fails with it.
func TestInvalidOptionRefused(t *testing.T) {
	const nowhere = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name string
		opt  restate.Option
		want error
	}{
		{"WithMaxRunning", restate.WithOptions(work.WithMaxRunning(-1)), work.ErrInvalidLimit},
		{"WithMaxOutstanding", restate.WithOptions(work.WithMaxOutstanding(-1)), work.ErrInvalidLimit},
		{"WithMaxStarts", restate.WithOptions(work.WithMaxStarts(-1)), work.ErrInvalidLimit},
		{"WithMaxDepth", restate.WithOptions(work.WithMaxDepth(-1)), work.ErrInvalidLimit},
		{"WithMaxResultBytes", restate.WithOptions(work.WithMaxResultBytes(-1)), work.ErrInvalidLimit},
		{"WithRetention", restate.WithOptions(work.WithRetention(0, -1)), work.ErrInvalidLimit},
		{"WithDefaultBudget", restate.WithOptions(work.WithDefaultBudget(work.Budget{MaxTurns: -2})), work.ErrInvalidBudget},
		{"WithBudgetCeiling", restate.WithOptions(work.WithBudgetCeiling(work.Budget{MaxTokens: -1})), work.ErrInvalidBudget},
		{"WithMaxAttempts", restate.WithMaxAttempts(-1), work.ErrInvalidLimit},
		{"WithRPCTimeout", restate.WithRPCTimeout(-time.Second), work.ErrInvalidLimit},
		{"WithPollInterval", restate.WithPollInterval(-1), work.ErrInvalidLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := restate.New(restate.WithIngress(nowhere), tc.opt)
			defer eng.Close(context.Background())
			o := work.NewOwner("o")
			spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
				Run: func(context.Context) (string, error) { return "", nil }}
			_, serr := eng.Start(t.Context(), spec)
			_, cerr := eng.Call(t.Context(), spec)
			perr := eng.SetPool(t.Context(), o, work.Budget{MaxTurns: 1})
			_, werr := restate.NewWorker(nil, restate.WithIngress(nowhere), restate.WithAdmin(nowhere), restate.WithRegistry(), tc.opt)
			for what, err := range map[string]error{"Start": serr, "Call": cerr, "SetPool": perr, "NewWorker": werr} {
				if !errors.Is(err, tc.want) || (tc.want == work.ErrInvalidLimit && !strings.Contains(err.Error(), tc.name)) {
					t.Errorf("%s = %v, want %v naming %s", what, err, tc.want, tc.name)
				}
			}
		})
	}
}

// An invalid content key (not 32 bytes) is refused as an invalid limit
// is: every Start, Call and SetPool of the Engine and NewWorker return
// it, naming WithContentKeys.
func TestInvalidContentKeyRefused(t *testing.T) {
	const nowhere = "http://127.0.0.1:1"
	for _, keys := range [][][]byte{{make([]byte, 16)}, {make([]byte, 32), make([]byte, 31)}} {
		opt := restate.WithContentKeys(keys[0], keys[1:]...)
		eng := restate.New(restate.WithIngress(nowhere), opt)
		defer eng.Close(context.Background())
		o := work.NewOwner("o")
		spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
			Run: func(context.Context) (string, error) { return "", nil }}
		_, serr := eng.Start(t.Context(), spec)
		_, cerr := eng.Call(t.Context(), spec)
		perr := eng.SetPool(t.Context(), o, work.Budget{MaxTurns: 1})
		_, werr := restate.NewWorker(nil, restate.WithIngress(nowhere), restate.WithAdmin(nowhere), restate.WithRegistry(), opt)
		for what, err := range map[string]error{"Start": serr, "Call": cerr, "SetPool": perr, "NewWorker": werr} {
			if err == nil || !strings.Contains(err.Error(), "WithContentKeys") {
				t.Errorf("%d-byte keys: %s = %v, want the key's error", len(keys[len(keys)-1]), what, err)
			}
		}
	}
}

// TestWorkerTargetMisuse: NewWorker refuses, as Temporal's does
// (driver.ValidTarget, work.ErrInvalidSpec), a target with both a Run and
// a Job or neither, an agent job, an invalid Job, a Run with no kind, and
// a label that cannot be part of a service's name.
func TestWorkerTargetMisuse(t *testing.T) {
	const nowhere = "http://127.0.0.1:1"
	run := func(context.Context, string) (string, error) { return "", nil }
	job := &work.Job{Submit: func(context.Context, string, string) ([]byte, error) { return nil, nil },
		Await: func(context.Context, []byte) (work.Poll, error) { return work.Poll{}, nil }}
	for _, tc := range []struct {
		name, label string
		c           restate.Child
	}{
		{"both", "x", restate.Child{Kind: work.KindFunction, Run: run, Job: job}},
		{"neither", "x", restate.Child{Kind: work.KindFunction}},
		{"agent-job", "x", restate.Child{Kind: work.KindAgent, Job: job}},
		{"no-await", "x", restate.Child{Kind: work.KindFunction, Job: &work.Job{Submit: job.Submit}}},
		{"negative-bound", "x", restate.Child{Kind: work.KindFunction, Job: &work.Job{Submit: job.Submit, Await: job.Await, MaxPolls: -1}}},
		{"no-kind", "x", restate.Child{Run: run}},
		{"no-label", "", restate.Child{Kind: work.KindFunction, Run: run}},
		{"slash", "a/b", restate.Child{Kind: work.KindFunction, Run: run}},
		{"space", "a b", restate.Child{Kind: work.KindFunction, Run: run}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := restate.NewWorker(map[string]restate.Child{tc.label: tc.c}, restate.WithIngress(nowhere), restate.WithAdmin(nowhere))
			if !errors.Is(err, work.ErrInvalidSpec) {
				t.Fatalf("NewWorker = %v, want work.ErrInvalidSpec", err)
			}
		})
	}
	for _, c := range []restate.Child{{Kind: work.KindAgent, Run: run}, {Kind: work.KindFunction, Job: job}} {
		if _, err := restate.NewWorker(map[string]restate.Child{"ok": c}, restate.WithIngress(nowhere), restate.WithAdmin(nowhere)); err != nil {
			t.Fatalf("NewWorker of a valid target = %v", err)
		}
	}
}
