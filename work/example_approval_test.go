package work_test

import (
	"context"
	"fmt"

	"github.com/agentwork/agentwork/work"
)

// A Work that needs approval is queued until the application answers: the
// owner's Subscription says so, Pending shows the request, Approve lets it
// run.
func ExampleEngine_Approve() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)
	o := work.NewOwner("coordinator")
	sub, _ := sup.Subscribe(ctx, o, 8)
	ref, _ := sup.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "deploy", Kind: work.KindFunction},
		Input: "v2 to production", NeedsApproval: true,
		Run: func(context.Context) (string, error) { return "deployed", nil }})

	n := <-sub.C()
	fmt.Println(n.Kind, n.State)
	reqs, _ := sup.Pending(ctx, work.Approver())
	fmt.Println(reqs[0].TargetLabel, reqs[0].Owner, reqs[0].Input)
	if err := sup.Approve(ctx, work.Approver(), ref.ID); err != nil {
		fmt.Println(err)
	}
	st, out, _ := sup.Result(ctx, o, ref.ID, work.MaxResultWait)
	fmt.Println(st.State, out)
	// Output:
	// approval queued
	// deploy coordinator v2 to production
	// completed deployed
}
