package enginetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

func (s *suite) observerAndClock(t *testing.T) {
	v := s.env(t, nil)
	if boundary.Observer(v.e) == nil {
		t.Fatal("Observer() is nil")
	}
	if n := boundary.Now(v.e); n.IsZero() {
		t.Fatal("Now() is zero")
	}
}

// shutdownReported: every engine's Shutdown returns its report and hands
// the same one, once, to an Observer that is an observe.ShutdownObserver,
// with a context that keeps the values of Shutdown's and not its end. An
// engine with nothing live drains even when the context has ended: there
// is nothing to wait for.
func (s *suite) shutdownReported(t *testing.T) {
	sc := &shutdownCtx{}
	v := s.env(t, func(c *Config) { sc.Observer, c.Observer = c.Observer, sc })
	o := owner(t, "shutdown")
	ref := v.start(o, Echo, "before the shutdown")
	v.settle(o, ref.ID)
	ctx, cancel := context.WithCancel(context.WithValue(v.ctx, shutdownKey{}, "kept"))
	cancel()
	rep, err := v.e.Shutdown(ctx)
	if err != nil || !rep.Drained || rep.OrphanCount() != 0 {
		t.Fatalf("Shutdown(ended ctx) with nothing live = %v, %v; want a drained report with no orphan", rep, err)
	}
	got := v.rec.Shutdowns()
	if len(got) != 1 || !reflect.DeepEqual(got[0], rep) {
		t.Fatalf("the Observer got %d reports %v; want the one Shutdown returned, %v", len(got), got, rep)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if c := sc.seen[0]; c.Value(shutdownKey{}) != "kept" || c.Err() != nil {
		t.Fatalf("the report's context: value %v, err %v; want Shutdown's value and no end", c.Value(shutdownKey{}), c.Err())
	}
}

type shutdownKey struct{}

// shutdownCtx records the context of each Shutdown report and hands the
// report on to the suite's Recorder (its Observer).
type shutdownCtx struct {
	observe.Observer
	mu   sync.Mutex
	seen []context.Context
}

func (s *shutdownCtx) ShutdownReported(ctx context.Context, rep observe.ShutdownReport) {
	s.mu.Lock()
	s.seen = append(s.seen, ctx)
	s.mu.Unlock()
	if so, ok := s.Observer.(observe.ShutdownObserver); ok {
		so.ShutdownReported(ctx, rep)
	}
}

func (s *suite) subscribe(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "sub")
	sub, err := v.e.Subscribe(t.Context(), o, 0)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	_, err = v.e.Subscribe(t.Context(), work.Owner{}, 0)
	wantErr(t, "Subscribe(zero owner)", err, work.ErrInvalidOwner)
	ref := v.start(o, Echo, "notice me")
	select {
	case n := <-sub.C():
		if n.WorkID != ref.ID || n.State != work.StateCompleted || !n.ResultAvailable || n.Target != Echo {
			t.Fatalf("notice = %+v", n)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no completion notice within 60s")
	}
	sub.Close()
	for range sub.C() { // closed: drains and ends
	}
	// Settled: every terminal visible Work, oldest settlement first; Live:
	// whether any visible Work is unfinished.
	if live, err := boundary.Live(t.Context(), v.e, o); err != nil || live {
		t.Fatalf("Live with only settled Work = %v, %v; want false", live, err)
	}
	_, c := v.running(o, Func, "")
	if live, err := boundary.Live(t.Context(), v.e, o); err != nil || !live {
		t.Fatalf("Live with a running Work = %v, %v; want true", live, err)
	}
	second := v.start(o, Echo, "second")
	v.eventually("second settled", func() bool {
		st, err := v.e.Status(t.Context(), o, second.ID)
		return err == nil && st.State.Terminal()
	})
	settled, err := boundary.Settled(t.Context(), v.e, o)
	if err != nil || len(settled) != 2 || settled[0].Work.ID != ref.ID || settled[1].Work.ID != second.ID {
		t.Fatalf("Settled = %+v, %v; want %s then %s", settled, err, ref.ID, second.ID)
	}
	v.finish(c, "", nil)
	if l, err := boundary.Settled(t.Context(), v.e, owner(t, "none")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("Settled(unknown owner) = %#v, %v", l, err)
	}
}

// subscribeExpired: a Work that settles and passes the retention age
// (Config.RetainAge) before the Subscription's next read still has its
// completion notice, as in-process, where the notice goes out as the Work
// settles: the notice is of the settlement, not of what a reader can still
// see.
func (s *suite) subscribeExpired(t *testing.T) {
	v := s.env(t, func(c *Config) { c.RetainAge = time.Nanosecond })
	o := owner(t, "expired")
	sub, err := v.e.Subscribe(t.Context(), o, 0)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	ref := v.start(o, Echo, "gone before the poll")
	select {
	case n := <-sub.C():
		if n.WorkID != ref.ID || n.State != work.StateCompleted || !n.ResultAvailable || n.Target != Echo {
			t.Fatalf("notice = %+v", n)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no completion notice within 60s for a Work that settled and expired (RetainAge) before a poll")
	}
	// It did expire: the age bound applies to the owner's reads.
	v.eventually("the expired Work is hidden", func() bool {
		_, err := v.e.Status(v.ctx, o, ref.ID)
		return errors.Is(err, work.ErrNotFound)
	})
}
