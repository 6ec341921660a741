package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// moverSet prepares owner on s with "mover", a function child
// whose calls move to the background after bound, and whose body waits
// for release (or returns at once when release is nil).
func moverSet(t *testing.T, s *work.Engine, owner work.Owner, bound time.Duration, release chan struct{}, out string) *middleware.Kit {
	t.Helper()
	set, err := middleware.Prepare(s, owner, map[string]any{"mover": middleware.Backgroundable(middleware.Child{
		Kind: work.KindFunction, AutoBackground: &middleware.AutoBackground{After: bound},
		Run: func(ctx context.Context, _ string) (string, error) {
			if release != nil {
				<-release
			}
			return out, nil
		}})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Release() })
	return set
}

// moveCall calls set's mover with input in ctx and, once the call and the
// Work's deadline wait on the clock (waits timers), moves the clock by
// bound; it returns the reply, a work.ref.
func moveCall(t *testing.T, h *harness, ctx context.Context, set *middleware.Kit, input string, waits int, bound time.Duration) string {
	t.Helper()
	reply := make(chan string, 1)
	go func() {
		out, _ := set.Tools()[0].Call(middleware.WithCallID(ctx, "call_move"), input)
		reply <- out
	}()
	h.clk.BlockUntil(waits)
	h.clk.Advance(bound)
	out := <-reply
	if !strings.HasPrefix(out, `{"kind":"work.ref"`) {
		t.Fatalf("the call did not move: %s", out)
	}
	return out
}

func spanNamed(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// TestBackgroundedTelemetry: a call that moves puts the event
// agentwork.work.backgrounded (with the state it moved in) on the Work's
// invoke_agent span, not on the call's execute_tool span, which ends as
// the ref is returned; it counts in
// agentwork.work.backgrounded{target} and writes an Info log line. A call
// that completes in time adds none of it.
func TestBackgroundedTelemetry(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	const bound = 2 * time.Second
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the engine's Close
	set := moverSet(t, h.s, h.owner, bound, release, "output")
	ctx, root := h.root()
	ref := moveCall(t, h, ctx, set, `{"input":"x"}`, 1, bound)

	call := spanNamed(h.spans.Ended(), "execute_tool mover")
	if call == nil {
		t.Fatal("the call's execute_tool span did not end with the ref")
	}
	var started []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Started() {
		started = append(started, s)
	}
	wspan := spanNamed(started, "invoke_agent mover")
	if wspan == nil {
		t.Fatal("no invoke_agent span")
	}
	var moved []string
	for _, e := range wspan.Events() {
		if e.Name == "agentwork.work.backgrounded" {
			moved = append(moved, attrString(e.Attributes))
		}
	}
	if !slices.Equal(moved, []string{" {agentwork.work.state=running}"}) {
		t.Fatalf("backgrounded events on the Work's span: %q", moved)
	}
	for _, e := range call.Events() {
		if e.Name == "agentwork.work.backgrounded" {
			t.Fatal("the event went on the call's span")
		}
	}
	if !strings.Contains(ref, `"id":"`) || !strings.Contains(renderSpans([]sdktrace.ReadOnlySpan{call}), "agentwork.work.id=<id>") {
		t.Fatalf("the call's span lacks the Work id:\n%s", renderSpans([]sdktrace.ReadOnlySpan{call}))
	}
	logs := h.logs.String()
	if !strings.Contains(logs, `"level":"INFO","msg":"agentwork.work.backgrounded"`) || !strings.Contains(logs, `"from":"running"`) {
		t.Fatalf("no Info line for the move:\n%s", logs)
	}

	// A call that completes in time: no move.
	fast := moverSet(t, h.s, work.NewOwner("fast"), bound, nil, "at once")
	if out, _ := fast.Tools()[0].Call(ctx, `{"input":"y"}`); out != "at once" {
		t.Fatalf("fast call = %s", out)
	}
	root.End()
	if got := series(h.collect()); !slices.Contains(got, "agentwork.work.backgrounded{target=mover} 1") {
		t.Fatalf("series: %q", got)
	}
}

// TestBackgroundedElsewhere: when the Work's span was not bound in this
// process (a durable runner's worker elsewhere), the event goes on the
// call's own span.
func TestBackgroundedElsewhere(t *testing.T) {
	h := newHarness(t)
	ctx, root := h.root()
	cctx, end := h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "mover", Owner: h.owner.ID(), AutoBackground: time.Second})
	id := strings.Repeat("ab", 16)
	h.obs.Event(cctx, observe.Event{Type: observe.EventBackgrounded, WorkID: id, Owner: h.owner.ID(), Target: "mover",
		From: work.StateQueued, Time: epoch, Duration: time.Second})
	end(observe.ToolCallEnd{WorkID: id, Outcome: "ok"})
	root.End()
	want := "coordinator kind=internal parent=root trace=t1 links=[] status=Unset\n" +
		"  attrs\n" +
		"execute_tool mover kind=internal parent=coordinator trace=t1 links=[] status=Unset\n" +
		"  attrs {agentwork.work.id=<id> agentwork.work.target=mover gen_ai.operation.name=execute_tool gen_ai.tool.name=mover gen_ai.tool.type=function}\n" +
		"  event agentwork.work.backgrounded {agentwork.work.state=queued}\n"
	diff(t, "spans", renderSpans(h.spans.Ended()), want)
}

// TestBackgroundedTraced: under a framework's own execute_tool span
// (observe.WithToolCallTraced) the move still goes on the Work's span.
func TestBackgroundedTraced(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	const bound = time.Second
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	set := moverSet(t, h.s, h.owner, bound, release, "output")
	ctx, root := h.root()
	ctx, call := h.tp.Tracer("framework").Start(ctx, "execute_tool mover")
	moveCall(t, h, observe.WithToolCallTraced(ctx), set, `{"input":"x"}`, 1, bound)
	call.End()
	root.End()
	var started []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Started() {
		started = append(started, s)
	}
	wspan := spanNamed(started, "invoke_agent mover")
	if wspan == nil {
		t.Fatal("no invoke_agent span")
	}
	if !slices.ContainsFunc(wspan.Events(), func(e sdktrace.Event) bool { return e.Name == "agentwork.work.backgrounded" }) {
		t.Fatalf("the move is not on the Work's span: %+v", wspan.Events())
	}
}
