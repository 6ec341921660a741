package restate

import (
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work/driver"
)

const ownerKey = "o"

// registry is the owner Virtual Object's handlers: one exclusive handler
// runs per owner at a time, so admission is atomic across coordinators.
type registry struct {
	ns     string
	maxDur time.Duration // the services' timeouts' floor (see timeouts)
}

func (g registry) definition() restate.ServiceDefinition {
	return restate.NewObject(g.ns+"."+ownerService, append(timeouts(g.maxDur), noJournal)...).
		Handler(hAdmit, restate.NewObjectHandler(g.admit)).
		Handler(hRecord, restate.NewObjectHandler(g.record)).
		Handler(hRead, restate.NewObjectHandler(g.markRead)).
		Handler(hDetached, restate.NewObjectHandler(g.detached)).
		Handler(hRelease, restate.NewObjectHandler(g.release)).
		Handler(hPool, restate.NewObjectHandler(g.setPool)).
		Handler(hRecords, restate.NewObjectSharedHandler(g.records))
}

func loadOwner(ctx restate.ObjectSharedContext) *ownerState {
	s, err := restate.Get[*ownerState](ctx, ownerKey)
	if err != nil || s == nil {
		return &ownerState{}
	}
	return s
}

// admit decides a start (driver.Registry.Decide) and, admitted, records
// the Work, creates its control object and sends its workflow the start:
// each a journaled step of this one invocation. Records past the age
// bound go first (by the admission's time, its input: deterministic).
func (g registry) admit(ctx restate.ObjectContext, r admitRequest) (admitReply, error) {
	s := loadOwner(ctx)
	if expired := s.Expire(r.Record.Created); len(expired) > 0 {
		// Kept whatever the decision: their control objects forget them.
		for _, id := range expired {
			g.forget(ctx, id)
		}
		restate.Set(ctx, ownerKey, s)
	}
	switch d := s.Decide(r.Admission); {
	case d.Again != nil: // its first call sent the Work's workflow
		return admitReply{ID: d.Again.ID, TargetID: d.Again.TargetID, Seq: d.Again.Seq}, nil
	case d.Replay != nil:
		return admitReply{Replay: true, ID: d.Replay.ID, TargetID: d.Replay.TargetID}, nil
	case d.Refusal != nil:
		return admitReply{Error: d.Refusal.Code, Message: d.Refusal.Error(), Limit: d.Limit, Budget: d.Budget}, nil
	}
	run, rec := s.Admit(r.Admission)
	restate.Set(ctx, ownerKey, s)
	in := r.Work
	driver.SetBudgetDims(&in.Budget, run)
	if _, err := restate.Object[restate.Void](ctx, g.ns+"."+controlService, in.ID, hInit).Request(in); err != nil {
		return admitReply{}, err
	}
	restate.WorkflowSend(ctx, workName(g.ns, in.Label), in.ID, hRun).Send(in)
	return admitReply{ID: in.ID, TargetID: rec.TargetID, Seq: rec.Seq}, nil
}

// record applies a Work's transition record (driver.Registry.Transition:
// the first terminal one settles its pool reservation and applies
// retention); the control objects of the Work retention evicted forget it.
func (g registry) record(ctx restate.ObjectContext, r ownerRecord) (restate.Void, error) {
	s := loadOwner(ctx)
	applied, evicted := s.Transition(r)
	if !applied {
		return restate.Void{}, nil
	}
	for _, id := range evicted {
		g.forget(ctx, id)
	}
	restate.Set(ctx, ownerKey, s)
	return restate.Void{}, nil
}

// forget has a terminal Work's control object drop its state.
func (g registry) forget(ctx restate.ObjectContext, id string) {
	restate.ObjectSend(ctx, g.ns+"."+controlService, id, hForget).Send(restate.Void{})
}

func (g registry) markRead(ctx restate.ObjectContext, id string) (restate.Void, error) {
	s := loadOwner(ctx)
	if s.MarkRead(id) {
		restate.Set(ctx, ownerKey, s)
	}
	return restate.Void{}, nil
}

// detached hides a Work: a finished one is forgotten, a live one once it
// ends.
func (g registry) detached(ctx restate.ObjectContext, id string) (restate.Void, error) {
	s := loadOwner(ctx)
	if found, dropped := s.Detach(id); found {
		if dropped {
			g.forget(ctx, id)
		}
		restate.Set(ctx, ownerKey, s)
	}
	return restate.Void{}, nil
}

// release forgets the owner (its starts and pool included) and tells each
// live Work to detach and cancel (one-way: a Work's control object calls
// this registry, so waiting for it here could deadlock).
func (g registry) release(ctx restate.ObjectContext, _ restate.Void) (restate.Void, error) {
	s := loadOwner(ctx)
	for _, r := range s.Records {
		if r.State.Terminal() {
			g.forget(ctx, r.ID)
		} else {
			restate.ObjectSend(ctx, g.ns+"."+controlService, r.ID, hDrop).Send(restate.Void{})
		}
	}
	restate.Clear(ctx, ownerKey)
	return restate.Void{}, nil
}

func (g registry) setPool(ctx restate.ObjectContext, limit [3]int64) (restate.Void, error) {
	s := loadOwner(ctx)
	s.SetPool(limit)
	restate.Set(ctx, ownerKey, s)
	return restate.Void{}, nil
}

// records answers the owner's visible records (a shared handler: reads
// never wait for admission).
func (g registry) records(ctx restate.ObjectSharedContext, _ restate.Void) ([]ownerRecord, error) {
	return loadOwner(ctx).Visible(), nil
}
