package driver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// registry is a registry a test changes between polls; reads counts
// every read so the test can wait for the poller to see a change.
type registry struct {
	mu    sync.Mutex
	recs  []Record
	reads chan struct{}
	fail  bool
}

func (g *registry) read(ctx context.Context) ([]Record, error) {
	g.mu.Lock()
	recs, fail := append([]Record(nil), g.recs...), g.fail
	g.mu.Unlock()
	select {
	case g.reads <- struct{}{}:
	default:
	}
	if fail {
		return nil, errors.New("registry unreachable")
	}
	return recs, nil
}

func (g *registry) set(recs ...Record) {
	g.mu.Lock()
	g.recs = recs
	g.mu.Unlock()
}

func next(t *testing.T, sub *work.Subscription) work.Notice {
	t.Helper()
	select {
	case n, ok := <-sub.C():
		if !ok {
			t.Fatal("subscription ended")
		}
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notice")
	}
	return work.Notice{}
}

func TestSubscribeNotices(t *testing.T) {
	o := work.NewOwner("coordinator")
	// Before the Subscription: a settled Work and one awaiting approval,
	// neither notified again.
	g := &registry{reads: make(chan struct{}, 1)}
	g.set(Record{ID: "old", State: work.StateCompleted, Finished: t0},
		Record{ID: "asked", State: work.StateQueued, Approval: true, Created: t0})
	var mu sync.Mutex
	var seenArgs []int
	updates := func(_ context.Context, r Record, seen int, publish func(work.Notice)) int {
		mu.Lock()
		seenArgs = append(seenArgs, seen)
		mu.Unlock()
		for s := seen + 1; s <= r.Updates; s++ {
			publish(work.Notice{Kind: work.NoticeUpdate, WorkID: r.ID, Seq: s})
		}
		return r.Updates
	}
	var l Life
	sub, err := l.Subscribe(context.Background(), o, 16, time.Millisecond, g.read, updates)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	g.set(Record{ID: "old", State: work.StateCompleted, Finished: t0},
		Record{ID: "asked", State: work.StateQueued, Approval: true, Created: t0},
		Record{ID: "new", Label: "research", State: work.StateQueued, Approval: true, Created: t0, Requested: t0.Add(time.Second)},
		Record{ID: "run", State: work.StateCompleted, Updates: 2, HasResult: true, Finished: t0.Add(time.Minute)})
	got := map[string][]work.Notice{}
	for range 4 {
		n := next(t, sub)
		got[n.WorkID] = append(got[n.WorkID], n)
	}
	if a := got["new"]; len(a) != 1 || a[0].Kind != work.NoticeApproval || !a[0].Time.Equal(t0.Add(time.Second)) || a[0].Target != "research" {
		t.Fatalf("approval notice: %+v", a)
	}
	r := got["run"]
	if len(r) != 3 || r[0].Kind != work.NoticeUpdate || r[0].Seq != 1 || r[1].Seq != 2 || r[2].Kind != 0 || !r[2].ResultAvailable {
		t.Fatalf("updates before the settlement: %+v", r)
	}
	if len(got["old"])+len(got["asked"]) != 0 {
		t.Fatalf("notified what preceded the Subscription: %+v", got)
	}
	// Nothing more while nothing changes (two more polls), nor while the
	// registry cannot be read.
	g.mu.Lock()
	g.fail = true
	g.mu.Unlock()
	<-g.reads
	<-g.reads
	select {
	case n := <-sub.C():
		t.Fatalf("a notice again: %+v", n)
	default:
	}
	mu.Lock()
	if len(seenArgs) != 1 || seenArgs[0] != 0 {
		t.Fatalf("updates read with seen %v, want [0]", seenArgs)
	}
	mu.Unlock()
	// Close ends the poller and refuses a later Subscribe.
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-sub.C(); ok {
		t.Fatal("a notice after Close")
	}
	if _, err := l.Subscribe(context.Background(), o, 1, time.Millisecond, g.read, updates); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if !l.Closed() {
		t.Fatal("Closed")
	}
}

func TestSubscribeRefusals(t *testing.T) {
	var l Life
	g := &registry{reads: make(chan struct{}, 1)}
	none := func(context.Context, Record, int, func(work.Notice)) int { return 0 }
	if _, err := l.Subscribe(context.Background(), work.Owner{}, 1, time.Millisecond, g.read, none); !errors.Is(err, work.ErrInvalidOwner) {
		t.Fatalf("zero owner: %v", err)
	}
	g.fail = true
	if _, err := l.Subscribe(context.Background(), work.NewOwner("o"), 1, time.Millisecond, g.read, none); err == nil {
		t.Fatal("an unreadable registry at Subscribe is its error")
	}
	// A Subscription closed by its holder leaves Close nothing to wait for.
	g.fail = false
	sub, err := l.Subscribe(context.Background(), work.NewOwner("o"), 1, time.Millisecond, g.read, none)
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	unwatched := false
	var w Life
	w.watch.Start(endWatcher{end: func() { unwatched = true }}, nil)
	if err := w.Close(context.Background()); err != nil || !unwatched {
		t.Fatalf("Close ends the watch: %v %v", err, unwatched)
	}
}

// TestSubscribeUpdatesBeforeSettlement: a terminal Work whose update
// details could not be read in a poll keeps its settlement notice for a
// later poll, so its update notices still come first; a Work whose
// updates stay unreadable is notified after settleTries polls anyway.
func TestSubscribeUpdatesBeforeSettlement(t *testing.T) {
	o := work.NewOwner("coordinator")
	g := &registry{reads: make(chan struct{}, 1)}
	var l Life
	var mu sync.Mutex
	failures := map[string]int{"flaky": 2, "gone": 1 << 30} // reads that fail before one succeeds
	updates := func(_ context.Context, r Record, seen int, publish func(work.Notice)) int {
		mu.Lock()
		defer mu.Unlock()
		if failures[r.ID] > 0 {
			failures[r.ID]--
			return seen
		}
		for s := seen + 1; s <= r.Updates; s++ {
			publish(work.Notice{Kind: work.NoticeUpdate, WorkID: r.ID, Seq: s})
		}
		return r.Updates
	}
	sub, err := l.Subscribe(context.Background(), o, 16, time.Millisecond, g.read, updates)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	g.set(Record{ID: "flaky", State: work.StateCompleted, Updates: 2, Finished: t0})
	for i, want := range []work.Notice{{Kind: work.NoticeUpdate, WorkID: "flaky", Seq: 1}, {Kind: work.NoticeUpdate, WorkID: "flaky", Seq: 2}, {WorkID: "flaky"}} {
		if n := next(t, sub); n.Kind != want.Kind || n.WorkID != want.WorkID || n.Seq != want.Seq {
			t.Fatalf("notice %d: %+v, want kind %q seq %d of %s", i, n, want.Kind, want.Seq, want.WorkID)
		}
	}
	g.set(Record{ID: "gone", State: work.StateFailed, Updates: 1, Finished: t0})
	if n := next(t, sub); n.Kind != work.NoticeSettled || n.WorkID != "gone" || n.State != work.StateFailed {
		t.Fatalf("a Work whose updates stay unreadable: %+v, want its settlement notice", n)
	}
}

// endWatcher is a Watcher whose watch ends with end.
type endWatcher struct {
	observe.NopObserver
	end func()
}

func (w endWatcher) Watch(observe.Watched) func() { return w.end }
