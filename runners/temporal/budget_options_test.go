package temporal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// An invalid budget option is refused as by the in-process engine: every
// Start, Call and SetPool returns it (New cannot fail).
func TestInvalidBudgetOptionRefused(t *testing.T) {
	for name, opt := range map[string]temporal.Option{
		"default": temporal.WithOptions(work.WithDefaultBudget(work.Budget{MaxTurns: -2})),
		"ceiling": temporal.WithOptions(work.WithBudgetCeiling(work.Budget{MaxTokens: -1})),
	} {
		t.Run(name, func(t *testing.T) {
			eng := temporal.New(nil, opt)
			defer eng.Close(context.Background())
			o := work.NewOwner("o")
			spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
				Run: func(context.Context) (string, error) { return "", nil }}
			if _, err := eng.Start(t.Context(), spec); !errors.Is(err, work.ErrInvalidBudget) {
				t.Errorf("Start = %v, want ErrInvalidBudget", err)
			}
			if _, err := eng.Call(t.Context(), spec); !errors.Is(err, work.ErrInvalidBudget) {
				t.Errorf("Call = %v, want ErrInvalidBudget", err)
			}
			if err := eng.SetPool(t.Context(), o, work.Budget{MaxTurns: 1}); !errors.Is(err, work.ErrInvalidBudget) {
				t.Errorf("SetPool = %v, want ErrInvalidBudget", err)
			}
		})
	}
}

// After Close, Start and Call refuse with work.ErrClosed: a prepared Spec
// launches no durable Work.
func TestStartAfterClose(t *testing.T) {
	eng := temporal.New(nil)
	if err := eng.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spec := work.Spec{Owner: work.NewOwner("o"), Target: work.Target{Label: "x", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "", nil }}
	if _, err := eng.Start(t.Context(), spec); !errors.Is(err, work.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	if _, err := eng.Call(t.Context(), spec); !errors.Is(err, work.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
}

// A negative limit option is refused as by the in-process engine: every
// Start, Call and SetPool of the Engine returns work.ErrInvalidLimit naming
// it, and NewWorker fails with it (as with an invalid budget option).
func TestInvalidLimitOptionRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  temporal.Option
		want error
	}{
		{"WithMaxRunning", temporal.WithOptions(work.WithMaxRunning(-1)), work.ErrInvalidLimit},
		{"WithMaxOutstanding", temporal.WithOptions(work.WithMaxOutstanding(-1)), work.ErrInvalidLimit},
		{"WithMaxStarts", temporal.WithOptions(work.WithMaxStarts(-1)), work.ErrInvalidLimit},
		{"WithMaxDepth", temporal.WithOptions(work.WithMaxDepth(-1)), work.ErrInvalidLimit},
		{"WithMaxResultBytes", temporal.WithOptions(work.WithMaxResultBytes(-1)), work.ErrInvalidLimit},
		{"WithRetention", temporal.WithOptions(work.WithRetention(-1, 0)), work.ErrInvalidLimit},
		{"WithDefaultBudget", temporal.WithOptions(work.WithDefaultBudget(work.Budget{MaxTurns: -2})), work.ErrInvalidBudget},
		{"WithMaxAttempts", temporal.WithMaxAttempts(-1), work.ErrInvalidLimit},
		{"WithRPCTimeout", temporal.WithRPCTimeout(-time.Second), work.ErrInvalidLimit},
		{"WithPollInterval", temporal.WithPollInterval(-1), work.ErrInvalidLimit},
		{"WithHeartbeatTimeout", temporal.WithHeartbeatTimeout(-time.Second), work.ErrInvalidLimit},
		{"WithAdmissionGrace", temporal.WithAdmissionGrace(-time.Minute), work.ErrInvalidLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := temporal.New(nil, tc.opt)
			defer eng.Close(context.Background())
			o := work.NewOwner("o")
			spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
				Run: func(context.Context) (string, error) { return "", nil }}
			_, serr := eng.Start(t.Context(), spec)
			_, cerr := eng.Call(t.Context(), spec)
			perr := eng.SetPool(t.Context(), o, work.Budget{MaxTurns: 1})
			_, werr := temporal.NewWorker(nil, nil, tc.opt)
			for what, err := range map[string]error{"Start": serr, "Call": cerr, "SetPool": perr, "NewWorker": werr} {
				if !errors.Is(err, tc.want) || (tc.want == work.ErrInvalidLimit && !strings.Contains(err.Error(), tc.name)) {
					t.Errorf("%s = %v, want %v naming %s", what, err, tc.want, tc.name)
				}
			}
		})
	}
}
