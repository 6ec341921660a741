package restate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// An Engine made with no ingress answers every method that would reach
// Temporal with work.ErrUnavailable naming the missing client, never a
// panic; NewWorker refuses a nil client.
func TestNoIngress(t *testing.T) {
	eng := restate.New()
	ctx := context.Background()
	o := work.NewOwner("o")
	id := driver.NewID() // a well-formed id: the Store is asked about it
	spec := work.Spec{Owner: o, Target: work.Target{Label: "x", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "", nil }}
	errs := map[string]error{}
	_, errs["Start"] = eng.Start(ctx, spec)
	_, errs["Status"] = eng.Status(ctx, o, id)
	_, errs["List"] = eng.List(ctx, o)
	_, _, errs["Rows"] = eng.Rows(ctx, o)
	_, _, errs["Result"] = eng.Result(ctx, o, id, 0)
	_, errs["Cancel"] = eng.Cancel(ctx, o, id)
	_, errs["Detach"] = eng.Detach(ctx, o, id)
	_, errs["Send"] = eng.Send(ctx, o, id, "c", "m")
	_, errs["Answer"] = eng.Answer(ctx, o, id, "c", "m")
	errs["Release"] = eng.Release(ctx, o)
	errs["SetPool"] = eng.SetPool(ctx, o, work.Budget{MaxTurns: 1})
	_, errs["Subscribe"] = eng.Subscribe(ctx, o, 1)
	_, errs["Settled"] = eng.Settled(ctx, o)
	_, errs["Live"] = eng.Live(ctx, o)
	_, errs["Pending"] = eng.Pending(ctx, o)
	errs["Approve"] = eng.Approve(ctx, work.Approver(), id)
	errs["Deny"] = eng.Deny(ctx, work.Approver(), id)
	_, errs["Updates"] = eng.Updates(ctx, o, id, 0)
	_, errs["Snapshot"] = eng.Snapshot(ctx)
	for m, err := range errs {
		if !errors.Is(err, work.ErrUnavailable) {
			t.Errorf("%s = %v, want work.ErrUnavailable", m, err)
		}
	}
	if err := eng.Close(ctx); err != nil {
		t.Errorf("Close = %v", err)
	}
}
