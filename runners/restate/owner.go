package restate

import (
	"slices"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
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

// admit decides a start and, admitted, records the Work, creates its
// control object and sends its workflow the start: each a journaled step
// of this one invocation.
func (g registry) admit(ctx restate.ObjectContext, r admitRequest) (admitReply, error) {
	s := loadOwner(ctx)
	if r.Launch != "" {
		if i := slices.IndexFunc(s.Launches, func(l launchRecord) bool { return l.Key == r.Launch }); i >= 0 {
			l := s.Launches[i]
			if l.Target != r.Record.Label || l.Digest != r.Digest {
				e := work.LaunchConflict()
				return admitReply{Error: e.Code, Message: e.Error()}, nil
			}
			return admitReply{Replay: true, ID: l.ID, TargetID: l.TargetID}, nil
		}
	}
	active := 0
	for _, rec := range s.Records {
		if !rec.State.Terminal() {
			active++
		}
	}
	if r.MaxOutstanding > 0 && active >= r.MaxOutstanding {
		e := work.LimitRefusal(work.LimitOutstanding, r.MaxOutstanding)
		return admitReply{Error: e.Code, Message: e.Error(), Limit: work.LimitOutstanding}, nil
	}
	if r.MaxStarts > 0 && s.Starts >= r.MaxStarts {
		e := work.LimitRefusal(work.LimitStarts, r.MaxStarts)
		return admitReply{Error: e.Code, Message: e.Error(), Limit: work.LimitStarts}, nil
	}
	run, held, short := s.Pool.Reserve(r.Want, r.Eff, r.Function)
	if short != "" {
		e := work.PoolRefusal(short)
		return admitReply{Error: e.Code, Message: e.Error(), Budget: short}, nil
	}
	if s.Pool != nil {
		for i := range held {
			s.Pool.Held[i] += held[i]
		}
	}
	s.Starts++
	s.Seq++
	s.Retain = r.Retain
	r.Record.Seq, r.Record.State, r.Record.Held = s.Seq, work.StateQueued, held
	s.Records = append(s.Records, r.Record)
	if r.Launch != "" {
		if len(s.Launches) >= work.MaxLaunchRecords {
			s.Launches = slices.Delete(s.Launches, 0, len(s.Launches)-work.MaxLaunchRecords+1)
		}
		s.Launches = append(s.Launches, launchRecord{Key: r.Launch, Target: r.Record.Label, Digest: r.Digest,
			ID: r.Record.ID, TargetID: r.Record.TargetID})
	}
	restate.Set(ctx, ownerKey, s)
	in := r.Work
	in.Budget.SetDims(run)
	if _, err := restate.Object[restate.Void](ctx, g.ns+"."+controlService, in.ID, hInit).Request(in); err != nil {
		return admitReply{}, err
	}
	restate.WorkflowSend(ctx, workName(g.ns, in.Label), in.ID, hRun).Send(in)
	return admitReply{ID: in.ID, TargetID: r.Record.TargetID, Seq: r.Record.Seq}, nil
}

// record applies a Work's transition record over an older revision; the
// first terminal one settles its pool reservation and applies retention.
func (g registry) record(ctx restate.ObjectContext, r ownerRecord) (restate.Void, error) {
	s := loadOwner(ctx)
	i := s.find(r.ID)
	if i < 0 {
		return restate.Void{}, nil
	}
	rec := &s.Records[i]
	if r.Rev <= rec.Rev {
		return restate.Void{}, nil
	}
	settled := rec.State.Terminal()
	rec.Take(r)
	if !settled && rec.State.Terminal() {
		s.Pool.Settle(rec.Held, r.Spent)
		rec.Held = [3]int64{}
		if rec.Detached {
			s.remove(i) // its control object forgets itself as it ends
		} else if gone := s.retain(s.Retain); gone != "" {
			g.forget(ctx, gone)
		}
	}
	restate.Set(ctx, ownerKey, s)
	return restate.Void{}, nil
}

// forget has a terminal Work's control object drop its state.
func (g registry) forget(ctx restate.ObjectContext, id string) {
	restate.ObjectSend(ctx, g.ns+"."+controlService, id, hForget).Send(restate.Void{})
}

// retain drops the oldest finished visible Work beyond n (0: no bound)
// and returns its id ("" for none).
func (s *ownerState) retain(n int) string {
	var term []int
	for j, x := range s.Records {
		if x.State.Terminal() && !x.Detached {
			term = append(term, j)
		}
	}
	if n <= 0 || len(term) <= n {
		return ""
	}
	oldest := term[0]
	for _, j := range term[1:] {
		if s.Records[j].Finished.Before(s.Records[oldest].Finished) {
			oldest = j
		}
	}
	id := s.Records[oldest].ID
	s.remove(oldest)
	return id
}

func (g registry) markRead(ctx restate.ObjectContext, id string) (restate.Void, error) {
	s := loadOwner(ctx)
	if i := s.find(id); i >= 0 && !s.Records[i].Read {
		s.Records[i].Read = true
		restate.Set(ctx, ownerKey, s)
	}
	return restate.Void{}, nil
}

// detached hides a Work: a finished one is forgotten, a live one once it
// ends.
func (g registry) detached(ctx restate.ObjectContext, id string) (restate.Void, error) {
	s := loadOwner(ctx)
	if i := s.find(id); i >= 0 {
		s.Records[i].Detached = true
		if s.Records[i].State.Terminal() {
			g.forget(ctx, id)
			s.remove(i)
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
	if s.Pool == nil {
		s.Pool = &pool{}
	}
	for i, v := range limit {
		s.Pool.Limit[i] = max(v, 0)
	}
	restate.Set(ctx, ownerKey, s)
	return restate.Void{}, nil
}

// records answers the owner's visible records (a shared handler: reads
// never wait for admission).
func (g registry) records(ctx restate.ObjectSharedContext, _ restate.Void) ([]ownerRecord, error) {
	s := loadOwner(ctx)
	out := make([]ownerRecord, 0, len(s.Records))
	for _, r := range s.Records {
		if !r.Detached {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *ownerState) find(id string) int {
	return slices.IndexFunc(s.Records, func(r ownerRecord) bool { return r.ID == id })
}

func (s *ownerState) remove(i int) { s.Records = slices.Delete(s.Records, i, i+1) }
