package driver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestValidTarget: the targets a Worker refuses (work.ErrInvalidSpec,
// the message naming the target) and those it takes.
func TestValidTarget(t *testing.T) {
	job := &work.Job{Submit: func(context.Context, string, string) ([]byte, error) { return nil, nil },
		Await: func(context.Context, []byte) (work.Poll, error) { return work.Poll{}, nil }}
	bad := *job
	bad.Backoff = work.Backoff{Initial: time.Minute, Max: time.Second}
	cases := []struct {
		name  string
		label string
		kind  observe.Kind
		runs  bool
		job   *work.Job
		want  string // "" when taken
	}{
		{"agent", "a", work.KindAgent, true, nil, ""},
		{"function", "f", work.KindFunction, true, nil, ""},
		{"job", "j", work.KindFunction, false, job, ""},
		{"no-label", "", work.KindFunction, true, nil, "a target needs a label: invalid work spec"},
		{"both", "b", work.KindFunction, true, job, `target "b" has both a Run and a Job: invalid work spec`},
		{"agent-job", "j", work.KindAgent, false, job, `target "j": a job is a function target: invalid work spec`},
		{"job-no-kind", "j", 0, false, job, `target "j": a job is a function target: invalid work spec`},
		{"invalid-job", "j", work.KindFunction, false, &bad, `target "j": `},
		{"neither", "n", work.KindFunction, false, nil, `target "n" needs a label, a Run and a kind: invalid work spec`},
		{"no-kind", "k", 0, true, nil, `target "k" needs a label, a Run and a kind: invalid work spec`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidTarget(tc.label, tc.kind, tc.runs, tc.job)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ValidTarget = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, work.ErrInvalidSpec) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Fatalf("ValidTarget = %v, want work.ErrInvalidSpec starting %q", err, tc.want)
			}
		})
	}
}
