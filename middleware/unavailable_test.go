package middleware_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// downEngine is an engine whose service is away: every read and action
// answers work.ErrUnavailable after wait (a remote engine's RPC timeout),
// counting the calls that reached it.
type downEngine struct {
	driver.Forwarder
	down  atomic.Bool
	wait  time.Duration
	calls atomic.Int32
}

func (d *downEngine) fail(ctx context.Context) error {
	d.calls.Add(1)
	select {
	case <-time.After(d.wait):
	case <-ctx.Done():
	}
	return driver.Detail(work.ErrUnavailable, "the service did not answer")
}

func (d *downEngine) Rows(ctx context.Context, o work.Owner) ([]observe.Row, int, error) {
	if d.down.Load() {
		return nil, 0, d.fail(ctx)
	}
	return d.Forwarder.Rows(ctx, o)
}

func (d *downEngine) Status(ctx context.Context, o work.Owner, id string) (work.Status, error) {
	if d.down.Load() {
		return work.Status{}, d.fail(ctx)
	}
	return d.Engine.Status(ctx, o, id)
}

func (d *downEngine) Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	if d.down.Load() {
		return work.CancelReceipt{}, d.fail(ctx)
	}
	return d.Engine.Cancel(ctx, o, id)
}

// TestStatusBlockUnavailable: while the engine cannot read the rows, the
// block states that the status is unavailable (neither an empty block,
// which says there is no Work, nor rows read before, shown as current).
func TestStatusBlockUnavailable(t *testing.T) {
	e := newEnv(t)
	d := &downEngine{Forwarder: driver.Forwarder{Engine: e.sup}}
	g := e.gate("x", nil)
	s, err := middleware.Prepare(driver.NewEngine(d), work.NewOwner("coord"), map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	if err != nil {
		t.Fatal(err)
	}
	id := launch(t, s, "research", "x")
	if got := s.StatusBlock(context.Background()); !strings.Contains(got, id) {
		t.Fatalf("block: %q", got)
	}
	d.down.Store(true)
	got := s.StatusBlock(context.Background())
	if got != middleware.StatusUnavailable {
		t.Fatalf("block while the engine is unavailable: %q, want %q", got, middleware.StatusUnavailable)
	}
	if strings.Contains(got, id) {
		t.Fatalf("the unavailable block shows a row: %q", got)
	}
	d.down.Store(false)
	g.open()
}

// TestWorkToolUnavailableOnce: an action on a Work while the engine is
// away answers the unavailable error object after one wait for the
// engine, not two (the existence check's and the action's).
func TestWorkToolUnavailableOnce(t *testing.T) {
	e := newEnv(t)
	d := &downEngine{Forwarder: driver.Forwarder{Engine: e.sup}, wait: 50 * time.Millisecond}
	g := e.gate("x", nil)
	s, err := middleware.Prepare(driver.NewEngine(d), work.NewOwner("coord"), map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	if err != nil {
		t.Fatal(err)
	}
	id := launch(t, s, "research", "x")
	d.down.Store(true)
	out := act(t, s, map[string]string{"action": "cancel", "id": id})
	if !strings.Contains(out, `"code":"unavailable"`) {
		t.Fatalf("cancel while the engine is away: %s", out)
	}
	if n := d.calls.Load(); n != 1 {
		t.Fatalf("the engine was asked %d times, want once", n)
	}
	d.down.Store(false)
	g.open()
}
