package langchaingo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// fakeService is an external batch service for a job child: Submit
// records the idempotency key and input and returns a handle; Await
// answers waiting until done is closed, then done with an output made of
// the handle.
type fakeService struct {
	mu      sync.Mutex
	keys    []string
	inputs  []string
	polls   int
	cancels []string
	done    chan struct{}
}

func newFakeService() *fakeService { return &fakeService{done: make(chan struct{})} }

func (f *fakeService) job(backoff time.Duration) work.Job {
	return work.Job{
		Submit: func(_ context.Context, key, input string) ([]byte, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.keys, f.inputs = append(f.keys, key), append(f.inputs, input)
			return []byte("job-" + input), nil
		},
		Await: func(_ context.Context, handle []byte) (work.Poll, error) {
			f.mu.Lock()
			f.polls++
			f.mu.Unlock()
			select {
			case <-f.done:
				return work.Poll{State: work.PollDone, Output: "batch done: " + string(handle)}, nil
			default:
				return work.Poll{State: work.PollWaiting}, nil
			}
		},
		Cancel: func(_ context.Context, handle []byte) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.cancels = append(f.cancels, string(handle))
			return nil
		},
		Backoff: work.Backoff{Initial: backoff, Max: backoff},
	}
}

func (f *fakeService) seen() (keys, inputs, cancels []string, polls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...), append([]string(nil), f.inputs...), append([]string(nil), f.cancels...), f.polls
}

// eventWaiter is an Observer that lets a test wait for a Work's event.
type eventWaiter struct {
	observe.NopObserver
	mu     sync.Mutex
	events []observe.Event
	ch     chan struct{} // closed and replaced on every event
}

func newEventWaiter() *eventWaiter { return &eventWaiter{ch: make(chan struct{})} }

func (w *eventWaiter) Event(_ context.Context, e observe.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, e)
	close(w.ch)
	w.ch = make(chan struct{})
}

// wait blocks until an event of type typ was delivered (for any Work when
// id is ""), or fails the test after the guard.
func (w *eventWaiter) wait(t *testing.T, id string, typ observe.EventType) observe.Event {
	t.Helper()
	timeout := time.After(guard)
	for {
		w.mu.Lock()
		for _, e := range w.events {
			if e.Type == typ && (id == "" || e.WorkID == id) {
				w.mu.Unlock()
				return e
			}
		}
		ch := w.ch
		w.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no %s event for work %q", typ, id)
		}
	}
}

// pollDue waits until the job's poll timer is armed (the only timer: no
// per-Work deadline) and makes it due.
func pollDue(t *testing.T, clock *fakeclock.Clock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatalf("no poll timer armed: %v", err)
	}
	clock.Advance(time.Minute)
}

// stateOf returns the state the work tool's JSON reports in out.
func stateOf(t *testing.T, out string) string {
	t.Helper()
	s, _ := decode(t, out)["state"].(string)
	return s
}

// TestJobChildBackground: a job child launched in the background is
// submitted with the Work id as its key, shows running in the work tool
// (and in the Snapshot as waiting, holding no slot) while it waits between
// polls, and its result is the job's output once the service is done.
func TestJobChildBackground(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	obs := newEventWaiter()
	sup := work.New(work.WithClock(clock), work.WithObserver(obs), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	defer closeSup(t, sup)
	svc := newFakeService()
	job := lc.NewJob("batch", "Runs a batch at the batch service.", svc.job(time.Minute))
	if _, err := job.Call(context.Background(), "x"); !errors.Is(err, lc.ErrJobNotPrepared) {
		t.Errorf("Call outside Prepare = %v, want ErrJobNotPrepared", err)
	}
	var log toolLog
	var id string
	var snap observe.Snapshot
	var block string
	var kit *lc.Kit
	m := scripted.New(
		scripted.ToolCall("batch", js(map[string]any{"input": "nightly", "run_in_background": true})),
		scripted.Func(func(req scripted.Request) scripted.Step {
			id = refID(log.outputs("batch")[0], "batch")
			obs.wait(t, id, observe.EventWaiting)
			var err error
			if snap, err = sup.Snapshot(context.Background()); err != nil {
				t.Errorf("Snapshot: %v", err)
			}
			pollDue(t, clock) // the first poll answers waiting
			if e := obs.wait(t, id, observe.EventPolled); e.Poll != observe.PollOutcomeWaiting {
				t.Errorf("first poll: outcome %q, want waiting", e.Poll)
			}
			block = kit.Middleware().StatusBlock(context.Background())
			return scripted.ToolCall("work", js(map[string]any{"action": "status", "id": id}))
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			close(svc.done)
			pollDue(t, clock) // the next poll answers done
			return scripted.ToolCall("work", js(map[string]any{"action": "result", "id": id, "timeout": "10s"}))
		}),
		scripted.Text("done"),
	)
	kit, err := lc.Prepare(context.Background(), sup, m, []tools.Tool{lc.Backgroundable(job)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), log.wrap(kit.Tools())), agents.WithMaxIterations(5))
	if _, err := exec.Call(ctx, map[string]any{"input": "run the nightly batch"}); err != nil {
		t.Fatal(err)
	}

	if id == "" {
		t.Fatalf("no work.ref: %v", log.all())
	}
	keys, inputs, _, polls := svc.seen()
	if len(keys) != 1 || keys[0] != id || inputs[0] != "nightly" {
		t.Errorf("submits: keys %v inputs %v, want one with key %s (the Work id) and input nightly", keys, inputs, id)
	}
	if polls < 2 {
		t.Errorf("%d polls, want a waiting one and a done one", polls)
	}
	status := log.outputs("work")
	if len(status) != 2 {
		t.Fatalf("work tool outputs %v, want status then result", status)
	}
	if got := stateOf(t, status[0]); got != "running" {
		t.Errorf("a waiting job's state = %q, want running (%s)", got, status[0])
	}
	if strings.Contains(status[0]+block, "job-nightly") || !strings.Contains(block, id+" | batch | running") {
		t.Errorf("while waiting: status %s, block %q; want the job running, without its handle", status[0], block)
	}
	if status[1] != "batch done: job-nightly" {
		t.Errorf("result = %q, want the job's exact output", status[1])
	}
	if snap.Waiting != 1 || snap.SlotsInUse != 0 || len(snap.Live) != 1 || !snap.Live[0].Waiting {
		t.Errorf("while waiting: Snapshot Waiting %d, SlotsInUse %d, Live %+v; want 1 waiting Work holding no slot", snap.Waiting, snap.SlotsInUse, snap.Live)
	}
}

// TestJobChildCancel: cancelling a waiting job through the work tool stops
// the wait and calls the job's Cancel once with its handle.
func TestJobChildCancel(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	obs := newEventWaiter()
	sup := work.New(work.WithClock(clock), work.WithObserver(obs), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	defer closeSup(t, sup)
	svc := newFakeService()
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{
		lc.Backgroundable(lc.NewJob("batch", "Runs a batch.", svc.job(time.Minute))),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ctx := context.Background()
	id := wantRef(t, callOK(t, ctx, toolNamed(t, kit.Tools(), "batch"), `{"input":"nightly","run_in_background":true}`), "batch")
	obs.wait(t, id, observe.EventWaiting)
	out := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]any{"action": "cancel", "id": id}))
	if m := decode(t, out); m["accepted"] != true {
		t.Fatalf("cancel = %s, want accepted", out)
	}
	if st := awaitState(t, sup, kit.Owner(), id); st != work.StateCancelled {
		t.Fatalf("state %s, want cancelled", st)
	}
	if _, _, cancels, _ := svc.seen(); len(cancels) != 1 || cancels[0] != "job-nightly" {
		t.Errorf("Cancel calls %v, want one with the handle", cancels)
	}
}

// TestJobChildForeground: a foreground call of a job child waits for the
// job and returns its exact output.
func TestJobChildForeground(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	svc := newFakeService()
	close(svc.done)
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{
		lc.Backgroundable(lc.NewJob("batch", "Runs a batch.", svc.job(time.Millisecond))),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if out := callOK(t, ctx, toolNamed(t, kit.Tools(), "batch"), `{"input":"small"}`); out != "batch done: job-small" {
		t.Errorf("foreground job = %q, want its exact output", out)
	}
	if keys, _, _, _ := svc.seen(); len(keys) != 1 || keys[0] == "" {
		t.Errorf("foreground submit keys %v, want one non-empty key", keys)
	}
}

// TestWaitingChildrenMisuse: what Prepare refuses of a job child or a
// child that needs approval, and the error object of a foreground call of
// one that needs approval.
func TestWaitingChildrenMisuse(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "ok", nil }
	tests := []struct {
		name string
		tool tools.Tool
		want error
	}{
		{"job without Await", lc.Backgroundable(lc.NewJob("j", "d", work.Job{Submit: newFakeService().job(0).Submit})), middleware.ErrInvalidChild},
		{"negative poll bound", lc.Backgroundable(lc.NewJob("j", "d", work.Job{Submit: newFakeService().job(0).Submit, Await: newFakeService().job(0).Await, MaxPolls: -1})), middleware.ErrInvalidChild},
		{"approval on a foreground-only child", lc.NewFunction("f", "d", fn, lc.WithApproval(0)), middleware.ErrInvalidChild},
		{"negative approval timeout", lc.Backgroundable(lc.NewFunction("f", "d", fn, lc.WithApproval(-time.Second))), middleware.ErrNegativeLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{tt.tool})
			if !errors.Is(err, tt.want) {
				kit.Release()
				t.Fatalf("Prepare = %v, want %v", err, tt.want)
			}
		})
	}

	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("deploy", "d", fn, lc.WithApproval(time.Hour)))})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	out := callOK(t, context.Background(), toolNamed(t, kit.Tools(), "deploy"), `{"input":"prod"}`)
	if e, _ := decode(t, out)["error"].(map[string]any); e["code"] != middleware.CodeChildInput || !strings.Contains(out, "needs approval") {
		t.Errorf("foreground call of a child that needs approval = %s, want code %s", out, middleware.CodeChildInput)
	}
	if live, err := boundary.Live(context.Background(), sup, kit.Owner()); err != nil || live {
		t.Errorf("the refused call started Work (live %v, %v)", live, err)
	}
}

// TestApprovalChild: a child that needs approval shows queued in the work
// tool until the application approves it; the application learns of it
// from a NoticeApproval and reads the request (target, input, owner) with
// Pending; after Approve it runs and completes. A second launch denied
// ends cancelled with class denied.
func TestApprovalChild(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ap := sup
	ran := make(chan string, 2)
	deploy := lc.NewFunction("deploy", "Deploys a service.", func(_ context.Context, in string) (string, error) {
		ran <- in
		return "deployed " + in, nil
	}, lc.WithApproval(time.Hour))
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(deploy)}, lc.WithOwner("release-bot"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	sub, err := sup.Subscribe(ctx, kit.Owner(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	wt := workTool(t, kit.Tools())
	id := wantRef(t, callOK(t, ctx, toolNamed(t, kit.Tools(), "deploy"), `{"input":"payments","run_in_background":true}`), "deploy")

	select {
	case n := <-sub.C():
		if n.Kind != work.NoticeApproval || n.WorkID != id || n.Target != "deploy" {
			t.Errorf("notice %+v, want an approval notice for %s", n, id)
		}
	case <-ctx.Done():
		t.Fatal("no approval notice")
	}
	status := callOK(t, ctx, wt, js(map[string]any{"action": "status", "id": id}))
	if got := stateOf(t, status); got != "queued" {
		t.Errorf("awaiting approval: state %q, want queued", got)
	}
	// The request's input is the approver's alone: neither the work
	// tool's JSON nor the status block carries it.
	if block := kit.Middleware().StatusBlock(ctx); !strings.Contains(block, id+" | deploy | queued") || strings.Contains(block+status, "payments") {
		t.Errorf("awaiting approval: status block %q and status %s; want the Work queued, without its input", block, status)
	}
	pending, err := ap.Pending(ctx, work.Approver())
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Work.ID != id || pending[0].TargetLabel != "deploy" || pending[0].Input != "payments" || pending[0].Owner != "release-bot" {
		t.Fatalf("Pending = %+v, want the deploy request with its input and owner", pending)
	}
	select {
	case in := <-ran:
		t.Fatalf("the child ran (%q) before its approval", in)
	default:
	}
	if err := ap.Approve(ctx, kit.Owner(), id); err != nil {
		t.Fatal(err)
	}
	out := callOK(t, ctx, wt, js(map[string]any{"action": "result", "id": id, "timeout": "10s"}))
	if out != "deployed payments" {
		t.Errorf("after approval: result %q, want the child's output", out)
	}

	id2 := wantRef(t, callOK(t, ctx, toolNamed(t, kit.Tools(), "deploy"), `{"input":"billing","run_in_background":true}`), "deploy")
	if err := ap.Deny(ctx, kit.Owner(), id2); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, callOK(t, ctx, wt, js(map[string]any{"action": "result", "id": id2, "timeout": "10s"}))); got != "cancelled" {
		t.Errorf("denied: state %q, want cancelled", got)
	}
	if st, err := sup.Status(ctx, kit.Owner(), id2); err != nil || st.Class != work.ClassDenied {
		t.Errorf("denied: Status %+v, %v; want class %s", st, err, work.ClassDenied)
	}
	if err := ap.Approve(ctx, kit.Owner(), id2); !errors.Is(err, work.ErrNotFound) {
		t.Errorf("Approve of a denied Work = %v, want ErrNotFound", err)
	}
	if len(ran) != 1 {
		t.Errorf("the child ran %d times, want once (the denied launch never runs)", len(ran))
	}
}

// TestTypedJob: NewTypedJob decodes the input object into its type before
// the submit, refuses an input that does not decode before any Work is
// accepted, and refuses a job.Submit of its own at Prepare.
func TestTypedJob(t *testing.T) {
	type batch struct {
		Table string `json:"table"`
		Rows  int    `json:"rows"`
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"table": map[string]any{"type": "string"}, "rows": map[string]any{"type": "integer"},
	}, "required": []any{"table"}}
	sup := work.New()
	defer closeSup(t, sup)
	got := make(chan batch, 1)
	svc := newFakeService()
	close(svc.done)
	j := svc.job(time.Millisecond)
	j.Submit = nil
	typed := lc.NewTypedJob("import", "Imports a table.", schema, func(_ context.Context, key string, in batch) ([]byte, error) {
		got <- in
		return []byte(in.Table), nil
	}, j)
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(typed)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	tool := toolNamed(t, kit.Tools(), "import")

	for _, bad := range []string{`{"table":"users","colour":"red","run_in_background":true}`, `{"table":"users","rows":"many","run_in_background":true}`} {
		out := callOK(t, ctx, tool, bad)
		if e, _ := decode(t, out)["error"].(map[string]any); e["code"] != middleware.CodeChildInput {
			t.Errorf("%s: %s, want code %s", bad, out, middleware.CodeChildInput)
		}
	}
	if live, err := boundary.Live(ctx, sup, kit.Owner()); err != nil || live {
		t.Fatalf("a refused input started Work (live %v, %v)", live, err)
	}
	id := wantRef(t, callOK(t, ctx, tool, `{"table":"users","rows":3,"run_in_background":true}`), "import")
	if st := awaitState(t, sup, kit.Owner(), id); st != work.StateCompleted {
		t.Fatalf("state %s, want completed", st)
	}
	if in := <-got; in != (batch{Table: "users", Rows: 3}) {
		t.Errorf("submit got %+v, want the decoded input", in)
	}
	if _, out, err := sup.Result(ctx, kit.Owner(), id, 0); err != nil || out != "batch done: users" {
		t.Errorf("result %q, %v; want the job's output", out, err)
	}

	_, err = lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewTypedJob("import", "d", schema,
		func(context.Context, string, batch) ([]byte, error) { return nil, nil }, svc.job(0)))})
	if !errors.Is(err, lc.ErrInvalidChild) {
		t.Errorf("NewTypedJob with a job.Submit: Prepare = %v, want ErrInvalidChild", err)
	}
}
