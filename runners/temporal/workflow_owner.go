package temporal

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work/driver"
)

// ownerWorkflow is one owner's registry: its visible Work, the limits on
// starts and outstanding Work (across every coordinator process), and
// release. It continues as new when its history grows.
func ownerWorkflow(ctx workflow.Context, st ownerState) error {
	o := &ownerRun{st: st}
	if err := workflow.SetQueryHandler(ctx, queryRecords, func() ([]ownerRecord, error) {
		return o.st.Visible(), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateAdmit, func(ctx workflow.Context, r admitRequest) (admitReply, error) {
		o.expire(ctx)
		// The validator decided; deciding again costs nothing and keeps the
		// handler right whatever ran between them.
		d := o.st.Decide(r)
		switch {
		case d.Again != nil:
			return admitReply{Seq: d.Again.Seq, Budget: d.Again.Run}, nil
		case d.Refusal != nil:
			return admitReply{}, refusal(d)
		case d.Replay != nil:
			return admitReply{Replay: true, ID: d.Replay.ID, TargetID: d.Replay.TargetID}, nil
		}
		run, rec := o.st.Admit(r)
		o.unconfirmed(ctx, rec.ID) // workflow_admission.go
		o.dirty = true
		return admitReply{Seq: rec.Seq, Budget: run}, nil
	}, workflow.UpdateHandlerOptions{Validator: o.validateAdmit}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updatePool, func(ctx workflow.Context, limit [3]int64) error {
		o.expire(ctx)
		o.st.SetPool(limit)
		return nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updateRelease, func(ctx workflow.Context) error {
		var futs []workflow.Future
		for _, r := range o.st.Records {
			if !r.State.Terminal() {
				futs = append(futs, workflow.SignalExternalWorkflow(ctx, r.ID, "", signalRelease, nil))
			}
		}
		for _, f := range futs {
			_ = f.Get(ctx, nil)
		}
		o.st = ownerState{Owner: o.st.Owner, Registry: driver.Registry{Retain: o.st.Retain, RetainAge: o.st.RetainAge}, Grace: o.st.Grace}
		o.trim = true
		return nil
	}); err != nil {
		return err
	}
	for _, u := range []struct {
		name  string
		apply func(string)
	}{{updateRead, func(id string) { o.st.MarkRead(id) }}, {updateDetached, func(id string) { o.st.Detach(id) }}, {updateForget, o.forget}} {
		if err := workflow.SetUpdateHandler(ctx, u.name, func(ctx workflow.Context, id string) error {
			o.expire(ctx)
			u.apply(id)
			o.dirty = true
			return nil
		}); err != nil {
			return err
		}
	}
	if err := workflow.SetUpdateHandler(ctx, updateRecord, func(ctx workflow.Context, r ownerRecord) error {
		o.expire(ctx)
		delete(o.st.Unconfirmed, r.ID) // its workflow (or its attempt) sent it
		o.st.Transition(r)
		o.dirty = true
		return nil
	}); err != nil {
		return err
	}
	long := func() bool {
		info := workflow.GetInfo(ctx)
		return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > maxOwnerHistory
	}
	// The loop wakes after each update that changed the state, to check
	// the history's length, and on a release.
	for {
		o.await(ctx) // workflow_admission.go: until an update, or a check is due
		o.dirty = false
		if o.trim || long() {
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			return workflow.NewContinueAsNewError(ctx, OwnerWorkflowName, o.st)
		}
	}
}

// maxOwnerHistory is the history length at which an owner's registry
// continues as new (tests lower it).
var maxOwnerHistory = 4000

type ownerRun struct {
	st    ownerState
	trim  bool
	dirty bool // an update changed the state: the run checks its length

	// The timer of the next admission check (workflow_admission.go).
	timerAt   time.Time
	stopTimer workflow.CancelFunc
	due       bool
}

// expire drops the finished records older than the age bound (RetainAge;
// 0: none) by workflow time, which the history records: each update
// handler that may change the state calls it first, so eviction by age is
// deterministic. No timer fires it between updates (it would add history
// to every idle registry): the Engine's reads hide expired records
// meanwhile (driver.Portable.Visible).
func (o *ownerRun) expire(ctx workflow.Context) {
	if o.st.RetainAge <= 0 {
		return
	}
	if len(o.st.Expire(workflow.Now(ctx))) > 0 {
		o.dirty = true
	}
}

func (o *ownerRun) validateAdmit(r admitRequest) error {
	if d := o.st.Decide(r); d.Refusal != nil {
		return refusal(d)
	}
	return nil
}

// refusal is a refused admission as the update's failure, with the
// limit's name or the pool's budget as its detail (refusalOf reads it).
func refusal(d driver.Decision) error {
	switch {
	case d.Limit != "":
		return workErr(d.Refusal, d.Limit)
	case d.Budget != "":
		return workErr(d.Refusal, d.Budget)
	}
	return workErr(d.Refusal)
}
