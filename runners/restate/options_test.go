package restate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

// A negative limit option (or an invalid budget option) is refused as by
// the Supervisor, before Restate is reached: every Start, Call and
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
