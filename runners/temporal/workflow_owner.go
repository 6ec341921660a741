package temporal

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
)

// OwnerWorkflow is one owner's registry: its visible Work, the limits on
// starts and outstanding Work (across every coordinator process), and
// release. It continues as new when its history grows.
func OwnerWorkflow(ctx workflow.Context, st ownerState) error {
	o := &ownerRun{st: st}
	if err := workflow.SetQueryHandler(ctx, queryRecords, func() ([]ownerRecord, error) {
		out := make([]ownerRecord, 0, len(o.st.Records))
		for _, r := range o.st.Records {
			if !r.Detached {
				out = append(out, r)
			}
		}
		return out, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, updateAdmit, func(ctx workflow.Context, r admitRequest) (admitReply, error) {
		o.expire(ctx)
		// The validator decided; deciding again costs nothing and keeps the
		// handler right whatever ran between them.
		l, replay, err := o.admission(r)
		switch {
		case err != nil:
			return admitReply{}, err
		case replay:
			return admitReply{Replay: true, ID: l.ID, TargetID: l.TargetID}, nil
		}
		run, held, _ := o.st.Pool.Reserve(r.Want, r.Eff, r.Function)
		if o.st.Pool != nil {
			for i := range held {
				o.st.Pool.Held[i] += held[i]
			}
		}
		o.st.Starts++
		o.st.Seq++
		r.Record.Seq = o.st.Seq
		r.Record.State = work.StateQueued
		r.Record.Held = held
		r.Record.Approval, r.Record.Requested = r.Approval, r.Record.Created
		o.st.Retain, o.st.RetainAge = r.Retain, r.RetainAge
		o.st.Records = append(o.st.Records, r.Record)
		if r.Launch != "" {
			if len(o.st.Launches) >= work.MaxLaunchRecords {
				o.st.Launches = slices.Delete(o.st.Launches, 0, len(o.st.Launches)-work.MaxLaunchRecords+1)
			}
			o.st.Launches = append(o.st.Launches, launchRecord{Key: r.Launch, Target: r.Record.Label, Digest: r.Digest,
				ID: r.Record.ID, TargetID: r.Record.TargetID})
		}
		o.dirty = true
		return admitReply{Seq: r.Record.Seq, Budget: run}, nil
	}, workflow.UpdateHandlerOptions{Validator: o.validateAdmit}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, updatePool, func(ctx workflow.Context, limit [3]int64) error {
		o.expire(ctx)
		if o.st.Pool == nil {
			o.st.Pool = &pool{}
		}
		for i, v := range limit {
			o.st.Pool.Limit[i] = max(v, 0)
		}
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
		o.st = ownerState{Owner: o.st.Owner, Retain: o.st.Retain, RetainAge: o.st.RetainAge}
		o.trim = true
		return nil
	}); err != nil {
		return err
	}
	for _, u := range []struct {
		name  string
		apply func(string)
	}{{updateRead, o.read}, {updateDetached, o.detach}, {updateForget, o.forget}} {
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
		o.transition(r)
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
		_ = workflow.Await(ctx, func() bool { return o.trim || o.dirty })
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
}

// expire drops the finished records older than the age bound (RetainAge;
// 0: none) by workflow time, which the history records: each update
// handler that may change the state calls it first, so eviction by age is
// deterministic. No timer fires it between updates (it would add history
// to every idle registry): the Engine's reads hide expired records
// meanwhile (Engine.records).
func (o *ownerRun) expire(ctx workflow.Context) {
	if o.st.RetainAge <= 0 {
		return
	}
	now := workflow.Now(ctx)
	n := len(o.st.Records)
	o.st.Records = slices.DeleteFunc(o.st.Records, func(r ownerRecord) bool { return r.Expired(now, o.st.RetainAge) })
	if len(o.st.Records) != n {
		o.dirty = true
	}
}

func (o *ownerRun) read(id string) {
	if i := o.find(id); i >= 0 {
		o.st.Records[i].Read = true
	}
}

func (o *ownerRun) detach(id string) {
	if i := o.find(id); i >= 0 {
		o.st.Records[i].Detached = true
		if o.st.Records[i].State.Terminal() {
			o.remove(i)
		}
	}
}

func (o *ownerRun) forget(id string) {
	// A start that failed after admission: its launch identity is free.
	o.st.Launches = slices.DeleteFunc(o.st.Launches, func(l launchRecord) bool { return l.ID == id })
	if i := o.find(id); i >= 0 {
		if !o.st.Records[i].State.Terminal() {
			o.st.Pool.Settle(o.st.Records[i].Held, &work.Usage{}) // it never ran
		}
		o.remove(i)
	}
}

func poolErr(short string) error {
	return workErr(work.PoolRefusal(short), short)
}

// launch finds the launch identity of r, if the owner used it.
func (o *ownerRun) launch(r admitRequest) (launchRecord, bool) {
	if r.Launch == "" {
		return launchRecord{}, false
	}
	i := slices.IndexFunc(o.st.Launches, func(l launchRecord) bool { return l.Key == r.Launch })
	if i < 0 {
		return launchRecord{}, false
	}
	return o.st.Launches[i], true
}

func (o *ownerRun) validateAdmit(r admitRequest) error {
	_, _, err := o.admission(r)
	return err
}

// admission decides a start: a repeated launch (replay, with the launch
// it repeats; no limit applies), a refusal (err), or admitted.
func (o *ownerRun) admission(r admitRequest) (l launchRecord, replay bool, err error) {
	if l, ok := o.launch(r); ok {
		if l.Target != r.Record.Label || l.Digest != r.Digest {
			return launchRecord{}, false, workErr(work.LaunchConflict())
		}
		return l, true, nil
	}
	active := 0
	for _, rec := range o.st.Records {
		if !rec.State.Terminal() {
			active++
		}
	}
	if r.MaxOutstanding > 0 && active >= r.MaxOutstanding {
		return launchRecord{}, false, workErr(work.LimitRefusal(work.LimitOutstanding, r.MaxOutstanding), work.LimitOutstanding)
	}
	if r.MaxStarts > 0 && o.st.Starts >= r.MaxStarts {
		return launchRecord{}, false, workErr(work.LimitRefusal(work.LimitStarts, r.MaxStarts), work.LimitStarts)
	}
	if _, _, short := o.st.Pool.Reserve(r.Want, r.Eff, r.Function); short != "" {
		return launchRecord{}, false, poolErr(short)
	}
	return launchRecord{}, false, nil
}

func (o *ownerRun) find(id string) int {
	return slices.IndexFunc(o.st.Records, func(r ownerRecord) bool { return r.ID == id })
}

func (o *ownerRun) remove(i int) { o.st.Records = slices.Delete(o.st.Records, i, i+1) }

func (o *ownerRun) transition(r ownerRecord) {
	i := o.find(r.ID)
	if i < 0 {
		return
	}
	rec := &o.st.Records[i]
	if r.Rev <= rec.Rev {
		return // a late or repeated record never moves a record back
	}
	// A terminal record is final, but for a later revision: the workflow
	// task that decided it can be lost after it was sent (its worker
	// died, or the server refused its completion, failing its cancel) and
	// the Work go on to its real end. The owner's pool was settled at the
	// first terminal record, and is not again.
	settled := rec.State.Terminal()
	rec.Take(r)
	if settled || !rec.State.Terminal() {
		return
	}
	o.st.Pool.Settle(rec.Held, r.Spent)
	rec.Held = [3]int64{}
	if rec.Detached {
		o.remove(i)
		return
	}
	// Retention: the oldest finished visible Work beyond Retain goes.
	var term []int
	for j, x := range o.st.Records {
		if x.State.Terminal() && !x.Detached {
			term = append(term, j)
		}
	}
	if o.st.Retain > 0 && len(term) > o.st.Retain {
		oldest := term[0]
		for _, j := range term[1:] {
			if o.st.Records[j].Finished.Before(o.st.Records[oldest].Finished) {
				oldest = j
			}
		}
		o.remove(oldest)
	}
}
