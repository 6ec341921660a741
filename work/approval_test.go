package work_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// hold starts a Work of target needing approval, with run and timeout.
func (h *harness) hold(o work.Owner, target work.Target, run work.RunFunc, input string, timeout time.Duration) work.Ref {
	h.t.Helper()
	ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: target, Run: run, Input: input,
		NeedsApproval: true, ApprovalTimeout: timeout})
	if err != nil {
		h.t.Fatalf("Start(NeedsApproval): %v", err)
	}
	return ref
}

func (h *harness) pending(o work.Owner) []work.ApprovalRequest {
	h.t.Helper()
	reqs, err := h.s.Pending(context.Background(), o)
	if err != nil {
		h.t.Fatalf("Pending: %v", err)
	}
	return reqs
}

func eventTypes(evs []observe.Event) []observe.EventType {
	out := make([]observe.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// TestApprovalTimerStopped: every way out of the held state stops the
// approval timeout's timer, and a stopped timer changes nothing later.
func TestApprovalTimerStopped(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		answer func(h *harness, o work.Owner, id string) error
		want   observe.State // the state once it settles (running: approved)
	}{
		{"approve", func(h *harness, o work.Owner, id string) error { return h.s.Approve(ctx, o, id) }, work.StateRunning},
		{"deny", func(h *harness, o work.Owner, id string) error { return h.s.Deny(ctx, o, id) }, work.StateCancelled},
		{"cancel", func(h *harness, o work.Owner, id string) error { _, err := h.s.Cancel(ctx, o, id); return err }, work.StateCancelled},
		{"release", func(h *harness, o work.Owner, id string) error { return h.s.Release(ctx, o) }, work.StateCancelled},
		{"close", func(h *harness, o work.Owner, id string) error { return h.s.Close(ctx) }, work.StateCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
			o := work.NewOwner("timer")
			c := h.child()
			ref := h.hold(o, fn, c.run, "in", time.Hour)
			if n := h.clk.Pending(); n != 1 {
				t.Fatalf("%d timers pending while awaiting approval, want 1 (the timeout)", n)
			}
			if err := tc.answer(h, o, ref.ID); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if n := h.clk.Pending(); n != 0 {
				t.Fatalf("%d timers pending after %s, want 0: the timeout's timer was not stopped", n, tc.name)
			}
			if tc.want == work.StateRunning {
				<-c.started
			}
			h.clk.Advance(2 * time.Hour)
			if tc.want == work.StateRunning {
				if st := h.status(o, ref.ID); st.State != work.StateRunning || st.Class != "" {
					t.Fatalf("approved Work after its old deadline = %+v, want running", st)
				}
				c.complete("ok")
				if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCompleted {
					t.Fatalf("approved Work ended %s, want completed", ev.Type)
				}
				return
			}
			if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCancelled || ev.ErrorClass == work.ClassApprovalTimeout {
				t.Fatalf("terminal event %s (%q), want cancelled, not by the timeout", ev.Type, ev.ErrorClass)
			}
			select {
			case <-c.started:
				t.Fatal("a Work that was never approved ran")
			default:
			}
		})
	}
}

// TestApprovalTimeout: with no answer the Work is cancelled with
// ClassApprovalTimeout exactly at its timeout (24 hours
// when 0), by the engine's clock.
func TestApprovalTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"explicit", 90 * time.Minute, 90 * time.Minute},
		{"default", 0, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			o := work.NewOwner("tmo")
			ref := h.hold(o, fn, immediate("never"), "in", tc.timeout)
			reqs := h.pending(o)
			if len(reqs) != 1 || !reqs[0].RequestedAt.Equal(t0) || !reqs[0].Deadline.Equal(t0.Add(tc.want)) {
				t.Fatalf("Pending = %+v; want one request at %v, deadline %v later", reqs, t0, tc.want)
			}
			h.clk.Advance(tc.want - time.Millisecond)
			if st := h.status(o, ref.ID); st.State != work.StateQueued || !st.AwaitingApproval {
				t.Fatalf("just before the timeout: %+v, want queued awaiting approval", st)
			}
			h.clk.Advance(time.Millisecond)
			st := h.status(o, ref.ID)
			if st.State != work.StateCancelled || st.Class != work.ClassApprovalTimeout || st.AwaitingApproval ||
				!st.FinishedAt.Equal(t0.Add(tc.want)) {
				t.Fatalf("at the timeout: %+v, want cancelled %s at %v", st, work.ClassApprovalTimeout, t0.Add(tc.want))
			}
			ev := h.obs.waitTerminal(ref.ID)
			if ev.ErrorClass != work.ClassApprovalTimeout || ev.Duration != tc.want {
				t.Fatalf("terminal event %+v; want class %s, duration %v", ev, work.ClassApprovalTimeout, tc.want)
			}
			want := []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventCancelled}
			if got := eventTypes(h.obs.events(ref.ID)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			if len(h.pending(work.Approver())) != 0 {
				t.Fatal("a timed-out Work is still pending")
			}
		})
	}
}

// TestApprovalAnswers: an answer counts once; answers to Work that does
// not await approval are ErrNotFound.
func TestApprovalAnswers(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := work.NewOwner("ans")
	a := h.hold(o, fn, immediate("a"), "in", 0)
	if err := h.s.Approve(ctx, o, a.ID); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	h.obs.waitTerminal(a.ID)
	wantCode(t, h.s.Approve(ctx, o, a.ID), work.ErrNotFound.Code)
	wantCode(t, h.s.Deny(ctx, o, a.ID), work.ErrNotFound.Code)

	d := h.hold(o, fn, immediate("d"), "in", 0)
	if err := h.s.Deny(ctx, o, d.ID); err != nil {
		t.Fatalf("Deny: %v", err)
	}
	wantCode(t, h.s.Approve(ctx, o, d.ID), work.ErrNotFound.Code)
	wantCode(t, h.s.Deny(ctx, work.Approver(), d.ID), work.ErrNotFound.Code)
	if st := h.status(o, d.ID); st.State != work.StateCancelled || st.Class != work.ClassDenied {
		t.Fatalf("denied Work = %+v", st)
	}
	want := []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventDenied, observe.EventCancelled}
	if got := eventTypes(h.obs.events(d.ID)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("denied Work's events %v, want %v", got, want)
	}

	plain, c := h.running(o, fn)
	wantCode(t, h.s.Approve(ctx, o, plain.ID), work.ErrNotFound.Code)
	wantCode(t, h.s.Deny(ctx, work.Approver(), plain.ID), work.ErrNotFound.Code)
	c.complete("x")
	queued := h.hold(o, fn, immediate("q"), "in", 0)
	if err := h.s.Approve(ctx, work.Approver(), queued.ID); err != nil {
		t.Fatalf("Approve(Approver()): %v", err)
	}
	h.obs.waitTerminal(queued.ID)
}

// TestApprovalMisuse: the stable errors of Pending, Approve and Deny.
func TestApprovalMisuse(t *testing.T) {
	ctx := context.Background()
	var zero work.Engine
	_, err := zero.Pending(ctx, work.Approver())
	wantCode(t, err, work.ErrNotInitialized.Code)
	wantCode(t, zero.Approve(ctx, work.NewOwner("a"), "x"), work.ErrNotInitialized.Code)
	wantCode(t, zero.Deny(ctx, work.NewOwner("a"), "x"), work.ErrNotInitialized.Code)

	h := newHarness(t)
	o := work.NewOwner("mis")
	ref := h.hold(o, fn, immediate("x"), "in", 0)
	for _, bad := range []work.Owner{{}, work.NewOwner("a/b")} {
		_, err := h.s.Pending(ctx, bad)
		wantCode(t, err, work.ErrInvalidOwner.Code)
		wantCode(t, h.s.Approve(ctx, bad, ref.ID), work.ErrInvalidOwner.Code)
		wantCode(t, h.s.Deny(ctx, bad, ref.ID), work.ErrInvalidOwner.Code)
	}
	wantCode(t, h.s.Approve(ctx, o, ""), work.ErrNotFound.Code)
	wantCode(t, h.s.Deny(ctx, work.Approver(), ""), work.ErrNotFound.Code)
	wantCode(t, h.s.Approve(ctx, work.NewOwner("other"), ref.ID), work.ErrNotFound.Code)
	if reqs := h.pending(work.NewOwner("nobody")); reqs == nil || len(reqs) != 0 {
		t.Fatalf("Pending(unknown owner) = %#v, want an empty non-nil slice", reqs)
	}
	// The approver role only reads and answers approvals.
	_, err = h.s.Start(ctx, work.Spec{Owner: work.Approver(), Target: fn, Run: immediate("x")})
	wantCode(t, err, work.ErrInvalidOwner.Code)
	_, err = h.s.List(ctx, work.Approver())
	wantCode(t, err, work.ErrInvalidOwner.Code)
	// A foreground call has no Ref to return while it waits.
	_, err = h.s.Call(ctx, work.Spec{Owner: o, Target: fn, Run: immediate("x"), NeedsApproval: true})
	if !errors.Is(err, work.ErrInvalidSpec) || !errors.Is(err, work.ApprovalCallRefusal) || !strings.Contains(err.Error(), "approval") {
		t.Fatalf("Call(NeedsApproval) = %v, want ApprovalCallRefusal (ErrInvalidSpec)", err)
	}
	if e, ok := work.DecodeError(work.ApprovalCallRefusal.Code, work.ApprovalCallRefusal.Error()); !ok || e.Error() != work.ApprovalCallRefusal.Error() {
		t.Fatalf("DecodeError does not round-trip ApprovalCallRefusal: %v", e)
	}

	if err := h.s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err = h.s.Pending(ctx, work.Approver())
	wantCode(t, err, work.ErrClosed.Code)
	wantCode(t, h.s.Approve(ctx, o, ref.ID), work.ErrClosed.Code)
	wantCode(t, h.s.Deny(ctx, o, ref.ID), work.ErrClosed.Code)
	if st := h.status(o, ref.ID); st.State != work.StateCancelled || st.Class != work.ClassCancelled {
		t.Fatalf("held Work after Close = %+v, want cancelled", st)
	}
}

// TestApprovalJoinsQueueTail: a held Work blocks nothing queued after it;
// approved, it joins the tail of its owner's queue, and its queue wait
// counts from the approval.
func TestApprovalJoinsQueueTail(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, work.WithMaxRunning(1), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	o := work.NewOwner("fifo")
	first, fc := h.running(o, fn)
	hc, q1c, q2c := h.child(), h.child(), h.child()
	held := h.hold(o, fn, hc.run, "in", 0)
	q1 := h.start(o, fn, q1c)
	h.clk.Advance(time.Minute)
	if err := h.s.Approve(ctx, o, held.ID); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	q2 := h.start(o, fn, q2c)
	snap, _ := h.s.Snapshot(ctx)
	if snap.Queued != 3 || snap.AwaitingApproval != 0 {
		t.Fatalf("Snapshot queued %d, awaiting %d; want 3, 0", snap.Queued, snap.AwaitingApproval)
	}
	t1 := t0.Add(time.Minute)
	want := map[string][2]time.Time{q1.ID: {t0, t0}, held.ID: {t0, t1}, q2.ID: {t1, t1}} // created, enqueued
	for _, lw := range snap.Live {
		if w, ok := want[lw.ID]; ok && (!lw.Created.Equal(w[0]) || !lw.Enqueued.Equal(w[1]) || lw.AwaitingApproval) {
			t.Fatalf("LiveWork %+v; want Created %v, Enqueued %v", lw, w[0], w[1])
		}
	}
	h.clk.Advance(time.Minute)
	fc.complete("first")
	<-q1c.started
	q1c.complete("q1")
	<-hc.started
	hc.complete("held")
	<-q2c.started
	q2c.complete("q2")
	var order []string
	for _, e := range h.obs.ofType(observe.EventRunning) {
		order = append(order, e.WorkID)
		if e.WorkID == held.ID && e.QueueWait != time.Minute {
			t.Fatalf("approved Work's QueueWait = %v, want 1m (from its approval, not its creation)", e.QueueWait)
		}
	}
	if want := []string{first.ID, q1.ID, held.ID, q2.ID}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("running order %v, want %v", order, want)
	}
	h.obs.waitTerminal(q2.ID)
}

// TestApprovalSnapshot: a held Work is live and queued in the census, but
// outside Snapshot.Queued; its target counts it as awaiting approval.
func TestApprovalSnapshot(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := work.NewOwner("snap")
	a := h.hold(o, fn, immediate("a"), "in "+canary, 0)
	h.clk.Advance(time.Second)
	h.hold(o, fn, immediate("b"), "in", 0)
	h.hold(o, agent, immediate("c"), "in", 0)
	snap, err := h.s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Queued != 0 || snap.AwaitingApproval != 3 || snap.SlotsInUse != 0 || len(snap.Live) != 3 {
		t.Fatalf("Snapshot = %+v; want 3 awaiting approval, none queued, no slot", snap)
	}
	if lw := snap.Live[0]; lw.ID != a.ID || lw.State != work.StateQueued || !lw.AwaitingApproval || !lw.Enqueued.IsZero() {
		t.Fatalf("oldest LiveWork = %+v; want %s queued, awaiting approval, not enqueued", lw, a.ID)
	}
	for _, tc := range snap.Counts {
		want, oldest := 1, t0.Add(time.Second)
		if tc.Target == fn.Label {
			want, oldest = 2, t0
		}
		if tc.AwaitingApproval != want || !tc.OldestApproval.Equal(oldest) || tc.Counts[0] != want {
			t.Fatalf("TargetCounts %+v; want %d awaiting (and queued), oldest %v", tc, want, oldest)
		}
	}
	if dump := fmt.Sprintf("%#v", snap); strings.Contains(dump, canary) {
		t.Fatal("the Snapshot carries an approval input")
	}
	if rows, _, _ := boundary.Rows(ctx, h.s, o); len(rows) != 3 || rows[0].State != work.StateQueued {
		t.Fatalf("Rows = %+v; want 3 queued", rows)
	}
}

// TestApprovalInputReachesOnlyTheApprover: the input is in Pending and in
// no event, status, row or error.
func TestApprovalInputReachesOnlyTheApprover(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := work.NewOwner("canary")
	ref := h.hold(o, fn, immediate("out"), "input "+canary, 0)
	if reqs := h.pending(o); len(reqs) != 1 || reqs[0].Input != "input "+canary || reqs[0].Owner != "canary" {
		t.Fatalf("Pending = %+v; want the input for the approver", reqs)
	}
	st := h.status(o, ref.ID)
	rows, _, _ := boundary.Rows(ctx, h.s, o)
	errs := []error{h.s.Approve(ctx, work.NewOwner("x"), ref.ID)}
	if err := h.s.Deny(ctx, o, ref.ID); err != nil {
		t.Fatal(err)
	}
	h.obs.waitTerminal(ref.ID)
	for what, v := range map[string]any{"events": h.obs.events(ref.ID), "status": st, "rows": rows, "errors": fmt.Sprint(errs)} {
		if dump := fmt.Sprintf("%#v", v); strings.Contains(dump, canary) {
			t.Errorf("the %s carry the approval input", what)
		}
	}
	if reqs := h.pending(work.Approver()); len(reqs) != 0 {
		t.Fatalf("Pending after the denial = %+v", reqs)
	}
}

// TestApprovalDetached: a detached held Work is the approver's alone; it
// still counts against its owner and is cancelled by Release.
func TestApprovalDetached(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := work.NewOwner("det")
	ref := h.hold(o, fn, immediate("x"), "in", 0)
	if _, err := h.s.Detach(ctx, o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if reqs := h.pending(o); len(reqs) != 0 {
		t.Fatalf("owner's Pending lists its detached Work: %+v", reqs)
	}
	wantCode(t, h.s.Approve(ctx, o, ref.ID), work.ErrNotFound.Code)
	if reqs := h.pending(work.Approver()); len(reqs) != 1 || reqs[0].Work != ref {
		t.Fatalf("approver's Pending = %+v, want the detached Work", reqs)
	}
	if err := h.s.Release(ctx, o); err != nil {
		t.Fatal(err)
	}
	if ev := h.obs.waitTerminal(ref.ID); ev.Type != observe.EventCancelled || ev.ErrorClass != work.ClassCancelled {
		t.Fatalf("released detached held Work ended %s (%q)", ev.Type, ev.ErrorClass)
	}
	if reqs := h.pending(work.Approver()); len(reqs) != 0 {
		t.Fatalf("Pending after Release = %+v", reqs)
	}
}

// TestApprovalInScope: a child's held Work is cancelled when the child
// ends; approved while the child waits on it, it runs on the child's lent
// slot (the pool's only slot is the child's).
func TestApprovalInScope(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, work.WithMaxRunning(1), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	_, parent := h.running(work.NewOwner("top"), agent)
	scope := parent.ex.Scope()
	gc := h.child()
	held := h.hold(scope, fn, gc.run, "in", 0)
	orphan := h.hold(scope, fn, immediate("never"), "in", 0)
	done := make(chan string, 1)
	parent.do(func(ctx context.Context) (string, error) {
		_, out, err := h.s.Result(ctx, scope, held.ID, work.MaxResultWait)
		done <- out
		return out, err
	})
	if err := h.s.Approve(ctx, scope, held.ID); err != nil {
		t.Fatalf("Approve(scope): %v", err)
	}
	select {
	case <-gc.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the approved Work did not run on its waiting parent's lent slot")
	}
	gc.complete("grandchild")
	if out := <-done; out != "grandchild" {
		t.Fatalf("parent's Result = %q", out)
	}
	if ev := h.obs.waitTerminal(orphan.ID); ev.Type != observe.EventCancelled || ev.ErrorClass != work.ClassCancelled {
		t.Fatalf("held Work of an ended scope ended %s (%q), want cancelled", ev.Type, ev.ErrorClass)
	}
	if reqs := h.pending(work.Approver()); len(reqs) != 0 {
		t.Fatalf("Pending after the scope ended = %+v", reqs)
	}
}

// TestApprovalShutdown: Shutdown counts a held Work as live Work to drain,
// and cancels it when its context ends.
func TestApprovalShutdown(t *testing.T) {
	h := newHarness(t, work.WithShutdownGrace(0))
	o := work.NewOwner("shut")
	ref := h.hold(o, fn, immediate("x"), "in", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := h.s.Shutdown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Drained || len(rep.Settled) != 1 || rep.Settled[0] != (observe.ShutdownCount{Target: fn.Label, State: work.StateCancelled, Count: 1}) {
		t.Fatalf("report %v; want not drained, one %s cancelled", rep, fn.Label)
	}
	if st := h.status(o, ref.ID); st.State != work.StateCancelled || st.Class != work.ClassCancelled {
		t.Fatalf("held Work after Shutdown = %+v", st)
	}
}

// TestApprovalOutstanding: a held Work counts against its owner's
// outstanding limit until it settles.
func TestApprovalOutstanding(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, work.WithMaxOutstanding(1))
	o := work.NewOwner("out")
	ref := h.hold(o, fn, immediate("x"), "in", 0)
	_, err := h.s.Start(ctx, work.Spec{Owner: o, Target: fn, Run: immediate("y")})
	wantCode(t, err, work.ErrLimit.Code)
	if err := h.s.Deny(ctx, o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Start(ctx, work.Spec{Owner: o, Target: fn, Run: immediate("y")}); err != nil {
		t.Fatalf("Start after the denial: %v", err)
	}
}
