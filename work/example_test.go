package work_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Start runs a child in the background and returns its Ref at once;
// Result waits (here up to 10 s) for its output.
func ExampleNew() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)
	owner := work.NewOwner("coordinator-1")
	ref, err := sup.Start(ctx, work.Spec{
		Owner:  owner,
		Target: work.Target{Label: "research", Kind: work.KindFunction},
		Run:    func(context.Context) (string, error) { return "Go 1.1 added per-P run queues.", nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, out, err := sup.Result(ctx, owner, ref.ID, 10*time.Second)
	fmt.Println(st.State, out, err)
	// Output:
	// completed Go 1.1 added per-P run queues. <nil>
}

// Cancel of a running Work is cooperative: the child's context ends, the
// Work is cancel-requested until the child returns, then cancelled.
func ExampleEngine_Cancel() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)
	owner := work.NewOwner("coordinator-1")
	running := make(chan struct{})
	ref, err := sup.Start(ctx, work.Spec{
		Owner:  owner,
		Target: work.Target{Label: "crawl", Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) {
			close(running)
			<-ctx.Done() // a long task that stops when asked
			return "", ctx.Err()
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	<-running
	rc, err := sup.Cancel(ctx, owner, ref.ID)
	fmt.Println(rc.Accepted, rc.State, err)
	st, _, _ := sup.Result(ctx, owner, ref.ID, 10*time.Second)
	fmt.Println(st.State)
	// Output:
	// true cancel-requested <nil>
	// cancelled
}
