package temporal_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
)

// waitHook is a client whose GetWorkflow tells when it is first called:
// Engine.Result has read the registry and begins its wait.
type waitHook struct {
	client.Client
	once    sync.Once
	waiting chan struct{}
}

func (h *waitHook) GetWorkflow(ctx context.Context, id, runID string) client.WorkflowRun {
	h.once.Do(func() { close(h.waiting) })
	return h.Client.GetWorkflow(ctx, id, runID)
}

// TestResultHiddenWhileAwaited: a Work that its owner detaches, or
// releases, while a Result waits for it is not_found when the wait ends,
// as in-process (the wait's outcome never answers for a Work its owner
// no longer sees).
func TestResultHiddenWhileAwaited(t *testing.T) {
	for _, hide := range []string{"detach", "release"} {
		t.Run(hide, func(t *testing.T) {
			c := server(t)
			release := make(chan struct{})
			targets := map[string]temporal.Target{"held": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
				select {
				case <-release:
					return "the output", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}}}
			_, queue := deploy(t, "hidden-"+hide, targets, nil, nil)
			hook := &waitHook{Client: c, waiting: make(chan struct{})}
			e := temporal.New(hook, temporal.WithTaskQueue(queue))
			defer e.Close(context.Background())
			o := work.NewOwner("hidden-" + hide)
			ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "held", Kind: work.KindFunction},
				Run: func(context.Context) (string, error) { return "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			type answer struct {
				st  work.Status
				out string
				err error
			}
			got := make(chan answer, 1)
			go func() {
				st, out, err := e.Result(context.Background(), o, ref.ID, work.MaxResultWait)
				got <- answer{st, out, err}
			}()
			<-hook.waiting
			switch hide {
			case "detach":
				if _, err := e.Detach(o, ref.ID); err != nil {
					t.Fatal(err)
				}
				close(release)
			case "release":
				e.Release(o)
			}
			a := <-got
			if !errors.Is(a.err, work.ErrNotFound) || a.out != "" {
				t.Fatalf("Result after %s while awaited = %s %q %v, want not_found", hide, a.st.State, a.out, a.err)
			}
		})
	}
}
