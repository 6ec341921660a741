package temporal

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/internal/durable"
	"github.com/agentwork/agentwork/work"
)

// updateResult is what an update's callbacks saw.
type updateResult struct {
	accepted, done bool
	err            error
}

func (u *updateResult) callbacks() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept:   func() { u.accepted = true },
		OnReject:   func(err error) { u.err = err },
		OnComplete: func(_ any, err error) { u.done, u.err = true, err },
	}
}

// pendingNotes is a registry's signal channel holding notes delivered and
// not yet applied (the rest of workflow.ReceiveChannel is not used).
type pendingNotes struct {
	workflow.ReceiveChannel
	q []ownerNote
}

func (p *pendingNotes) Len() int { return len(p.q) }

func (p *pendingNotes) ReceiveAsync(v any) bool {
	if len(p.q) == 0 {
		return false
	}
	*v.(*ownerNote), p.q = p.q[0], p.q[1:]
	return true
}

// TestAdmissionOverPendingNotes: an admission decided in the workflow task
// that also delivers a note (a Work's end) is decided over the note, by
// the validator (which may not apply it, and so leaves the decision to
// the handler) and by the handler (which applies it first): the Work that
// ended frees its place under an outstanding limit of one.
func TestAdmissionOverPendingNotes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	admit := func(id string) admitRequest {
		return admitRequest{Record: ownerRecord{ID: id, Label: "echo", TargetID: "echo", Kind: work.KindFunction, Created: t0},
			MaxOutstanding: 1, Retain: 10, Function: true}
	}
	o := &ownerRun{st: ownerState{Owner: "o", Registry: durable.Registry{Retain: 10}}, notes: &pendingNotes{}}
	o.st.Admit(admit("w1"))
	if err := o.validateAdmit(admit("w0")); !errors.Is(fromTemporal(err), work.ErrLimit) {
		t.Fatalf("validator with w1 outstanding and no note: %v, want the limit", err)
	}
	o.notes = &pendingNotes{q: []ownerNote{{Record: &ownerRecord{ID: "w1", State: work.StateCompleted, Rev: 1 << revTaskShift,
		Attempt: 1, Started: t0, Finished: t0.Add(time.Second), HasResult: true, Spent: &work.Usage{}}}}}
	if err := o.validateAdmit(admit("w2")); err != nil {
		t.Fatalf("validator with w1's end delivered: %v, want no refusal", err)
	}
	if _, err := o.admit(nil, admit("w2")); err != nil {
		t.Fatalf("handler with w1's end delivered: %v, want admitted", err)
	}
	if o.notes.Len() != 0 {
		t.Fatal("the handler left the note unapplied")
	}
	if i := o.st.Find("w1"); i < 0 || o.st.Records[i].State != work.StateCompleted {
		t.Fatal("w1's note was not applied")
	}
}

// TestRegistryAppliesNotesFirst: a note (a Work's transition, sent as a
// signal) delivered with an admission in one workflow task is applied
// before the admission is decided, by its validator as by its handler:
// under an outstanding limit of one, the Work that ended frees its place
// for the next. A query after them sees the note applied too.
func TestRegistryAppliesNotesFirst(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(OwnerWorkflow, workflow.RegisterOptions{Name: OwnerWorkflowName})
	// The release at the end cancels the Work still outstanding.
	env.OnSignalExternalWorkflow(mock.Anything, "w2", "", signalRelease, mock.Anything).Return(nil)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	admit := func(id string) admitRequest {
		return admitRequest{Record: ownerRecord{ID: id, Label: "echo", TargetID: "echo", Kind: work.KindFunction, Created: t0},
			MaxOutstanding: 1, Retain: 10, Function: true}
	}
	var first, second, over updateResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(updateAdmit, "first", first.callbacks(), admit("w1"))
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		// A second Work while the first is outstanding: refused.
		env.UpdateWorkflow(updateAdmit, "over", over.callbacks(), admit("w0"))
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(signalNote, ownerNote{Record: &ownerRecord{ID: "w1", State: work.StateCompleted, Rev: 1 << revTaskShift,
			Attempt: 1, Started: t0, Finished: t0.Add(time.Second), HasResult: true, Spent: &work.Usage{}}})
		env.UpdateWorkflow(updateAdmit, "second", second.callbacks(), admit("w2"))
	}, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(queryRecords)
		if err != nil {
			t.Error(err)
			return
		}
		var recs []ownerRecord
		if err := v.Get(&recs); err != nil {
			t.Error(err)
			return
		}
		states := map[string]work.State{}
		for _, r := range recs {
			states[r.ID] = r.State
		}
		if states["w1"] != work.StateCompleted || states["w2"] != work.StateQueued || len(states) != 2 {
			t.Errorf("the registry holds %v, want w1 completed and w2 queued", states)
		}
		env.UpdateWorkflow(updateRelease, "release", (&updateResult{}).callbacks())
	}, 4*time.Second)
	env.ExecuteWorkflow(OwnerWorkflowName, ownerState{Owner: "o", Registry: durable.Registry{Retain: 10}})
	var cont *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &cont) {
		t.Fatalf("the registry ended with %v, want a continue-as-new after the release", err)
	}
	if !first.done || first.err != nil {
		t.Fatalf("first admission: %+v", first)
	}
	if over.err == nil || !errors.Is(fromTemporal(over.err), work.ErrLimit) {
		t.Fatalf("admission over the limit: %+v, want refused by the limit", over)
	}
	if !second.accepted || !second.done || second.err != nil {
		t.Fatalf("admission after the note: %+v, want admitted", second)
	}
}
