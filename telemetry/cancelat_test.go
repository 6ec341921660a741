package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// A Work whose cancel request this Observer saw but whose terminal event
// another process reports (a durable runner's workflow moved to another
// worker) leaves no cancel-request time behind: the next collection
// forgets times of Work no watched engine holds cancel-requested,
// and keeps those of Work one does.
func TestCancelRequestTimesOfForeignWorkAreForgotten(t *testing.T) {
	h := newHarness(t)
	foreign := observe.Event{Type: observe.EventCancelRequested, WorkID: "0123456789abcdef0123456789abcdef", Owner: "elsewhere",
		Target: "researcher", Kind: work.KindAgent, From: work.StateRunning, To: work.StateCancelRequested, Time: epoch}
	h.obs.Event(context.Background(), foreign)

	started, release := make(chan struct{}), make(chan struct{})
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: h.owner, Target: work.Target{Label: "block", Kind: work.KindAgent},
		Run: func(ctx context.Context) (string, error) {
			close(started)
			<-release // stays cancel-requested until the test ends
			return "", ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	defer close(release)
	h.clk.Advance(time.Second)
	if r, err := h.s.Cancel(t.Context(), h.owner, ref.ID); err != nil || !r.Accepted {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	if n := telemetry.CancelEntries(h.obs); n != 2 {
		t.Fatalf("%d cancel-request times before collection, want 2", n)
	}
	h.collect()
	if n := telemetry.CancelEntries(h.obs); n != 1 {
		t.Errorf("%d cancel-request times after collection, want 1 (the watched engine's Work)", n)
	}
	_ = h.obs.Status()
	if n := telemetry.CancelEntries(h.obs); n != 1 {
		t.Errorf("%d cancel-request times after the status page, want 1", n)
	}
}

// failOnce is a watched engine whose first Snapshot fails; it records the
// context of each call.
type failOnce struct {
	calls int
	ctxs  []context.Context
}

func (f *failOnce) Snapshot(ctx context.Context) (observe.Snapshot, error) {
	f.calls++
	f.ctxs = append(f.ctxs, ctx)
	if f.calls == 1 {
		return observe.Snapshot{}, context.DeadlineExceeded
	}
	return observe.Snapshot{Time: epoch}, nil
}

// A watched engine whose Snapshot fails may hold any Work cancel-requested:
// that round forgets no cancel-request time; the next, which every engine
// answers, forgets the times of Work none holds cancel-requested.
func TestCancelRequestTimesKeptWhenASnapshotFails(t *testing.T) {
	h := newHarness(t)
	f := &failOnce{}
	defer h.obs.Watch(f)()
	h.obs.Event(context.Background(), observe.Event{Type: observe.EventCancelRequested, WorkID: "0123456789abcdef0123456789abcdef", Owner: "elsewhere",
		Target: "researcher", Kind: work.KindAgent, From: work.StateRunning, To: work.StateCancelRequested, Time: epoch})
	_ = h.obs.Status()
	if f.calls != 1 {
		t.Fatalf("%d Snapshot calls, want 1", f.calls)
	}
	if n := telemetry.CancelEntries(h.obs); n != 1 {
		t.Fatalf("%d cancel-request times after a failed Snapshot, want 1 (kept)", n)
	}
	_ = h.obs.Status()
	if n := telemetry.CancelEntries(h.obs); n != 0 {
		t.Fatalf("%d cancel-request times after every engine answered, want 0", n)
	}
}

type ctxKey struct{}

// The status handler gives the engines' Snapshots the request's context.
func TestStatusHandlerUsesTheRequestContext(t *testing.T) {
	h := newHarness(t)
	f := &failOnce{calls: 1} // answers
	defer h.obs.Watch(f)()
	req := httptest.NewRequest(http.MethodGet, "/status?format=json", nil)
	req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "request"))
	rec := httptest.NewRecorder()
	h.obs.StatusHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if len(f.ctxs) != 1 || f.ctxs[0].Value(ctxKey{}) != "request" {
		t.Fatalf("Snapshot contexts %v, want the request's", f.ctxs)
	}
}
