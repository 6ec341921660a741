package enginetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// approval checks approval before a child starts (Spec.NeedsApproval;
// Pending, Approve, Deny). An Engine without approvals (its Pending
// answers errors.ErrUnsupported) must refuse such a Spec
// (ErrInvalidSpec), never run it unapproved.
func (s *suite) approval(t *testing.T) {
	v := s.env(t, nil)
	if !v.hasApprovals() {
		spec := v.spec(owner(t, "noapproval"), Echo, "x")
		spec.NeedsApproval = true
		_, err := v.e.Start(v.ctx, spec)
		wantErr(t, "Start(NeedsApproval) on an Engine without approvals", err, work.ErrInvalidSpec)
		return
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"ApproveRuns", s.approveRuns},
		{"Deny", s.approvalDeny},
		{"Timeout", s.approvalTimeout},
		{"HoldsNoSlot", s.approvalHoldsNoSlot},
		{"CancelAndRelease", s.approvalCancelRelease},
		{"Misuse", s.approvalMisuse},
	} {
		t.Run(tc.name, tc.run)
	}
}

// held starts label with input as a Work needing approval.
func (v *env) held(o work.Owner, label, input string, timeout time.Duration) work.Ref {
	v.t.Helper()
	spec := v.spec(o, label, input)
	spec.NeedsApproval, spec.ApprovalTimeout = true, timeout
	ref, err := v.e.Start(v.ctx, spec)
	if err != nil {
		v.t.Fatalf("Start(%s, NeedsApproval): %v", label, err)
	}
	return ref
}

// hasApprovals reports whether the Engine has approvals: its Pending does
// not answer errors.ErrUnsupported.
func (v *env) hasApprovals() bool {
	_, err := v.e.Pending(v.ctx, work.NewOwner("capabilities"))
	return !errors.Is(err, errors.ErrUnsupported)
}

// notice waits for sub's notice of kind about id, skipping others.
func (v *env) notice(sub *work.Subscription, kind work.NoticeKind, id string) work.Notice {
	v.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case n, ok := <-sub.C():
			if !ok {
				v.t.Fatalf("the subscription closed before a %s notice of %s", kind, id)
			}
			if n.Kind == kind && n.WorkID == id {
				return n
			}
		case <-timeout:
			v.t.Fatalf("no %s notice of %s within 60s", kind, id)
		}
	}
}

// wantPath checks that the Work's events include types in this order,
// and none of absent.
func (v *env) wantPath(id string, types []observe.EventType, absent ...observe.EventType) []observe.Event {
	v.t.Helper()
	var evs []observe.Event
	v.eventually("the terminal event of "+id, func() bool {
		evs = byWork(v.rec.Events())[id]
		return hasTerminal(evs)
	})
	i := 0
	for _, e := range evs {
		for _, a := range absent {
			if e.Type == a {
				v.t.Errorf("Work %s has a %s event\n%s", id, a, describe(evs))
			}
		}
		if i < len(types) && e.Type == types[i] {
			i++
		}
	}
	if i < len(types) {
		v.t.Errorf("Work %s: events lack %v in order (found the first %d)\n%s", id, types, i, describe(evs))
	}
	return evs
}

func (v *env) noCanary() {
	v.t.Helper()
	if dump := fmt.Sprintf("%#v", v.rec.Events()); strings.Contains(dump, canary) {
		v.t.Errorf("an Observer event carries an approval input: %s", canaryContext(dump))
	}
	if dump := fmt.Sprintf("%#v", v.rec.Calls()); strings.Contains(dump, canary) {
		v.t.Errorf("an Observer call carries an approval input: %s", canaryContext(dump))
	}
}

func (v *env) pendingIDs(o work.Owner) []string {
	v.t.Helper()
	reqs, err := v.e.Pending(v.ctx, o)
	if err != nil {
		v.t.Fatalf("Pending(%s): %v", o.ID(), err)
	}
	if reqs == nil {
		v.t.Fatalf("Pending(%s) = nil, want a non-nil slice", o.ID())
	}
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.Work.ID
	}
	return ids
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// approveRuns: a held Work is queued (JSON too), announced by a
// NoticeApproval, readable with its input by its owner and the approver
// only, answerable by its owner only; approved, it runs and completes.
func (s *suite) approveRuns(t *testing.T) {
	v := s.env(t, nil)
	ap := v.e
	o, other := owner(t, "appr"), owner(t, "appr-other")
	sub, err := v.e.Subscribe(v.ctx, o, 16)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	input := "approve me " + canary
	ref := v.held(o, Echo, input, 0)
	n := v.notice(sub, work.NoticeApproval, ref.ID)
	if n.State != work.StateQueued || n.Target != Echo || n.ResultAvailable {
		t.Fatalf("approval notice = %+v; want state queued, target %s", n, Echo)
	}
	st := v.status(o, ref.ID)
	if st.State != work.StateQueued || !st.AwaitingApproval || !st.StartedAt.IsZero() {
		t.Fatalf("Status while awaiting approval = %+v; want queued, AwaitingApproval", st)
	}
	b, _ := json.Marshal(st)
	if !strings.Contains(string(b), `"state":"queued"`) || strings.Contains(string(b), "startedAt") ||
		strings.Contains(string(b), "pproval") || strings.Contains(string(b), canary) {
		t.Fatalf("Status JSON while awaiting approval = %s; want the queued WorkStatus, nothing more", b)
	}

	reqs, err := ap.Pending(v.ctx, o)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("Pending(owner) = %+v, %v; want one request", reqs, err)
	}
	r := reqs[0]
	if r.Work != ref || r.TargetLabel != Echo || r.Owner != o.ID() || r.Input != input || r.RequestedAt.IsZero() {
		t.Fatalf("request = %+v; want %s, target %s, owner %s and the input", r, ref.ID, Echo, o.ID())
	}
	if d := r.Deadline.Sub(r.RequestedAt); d < contract.DefaultApprovalWait-time.Minute || d > contract.DefaultApprovalWait+time.Minute {
		t.Fatalf("request deadline %v after the request; want the default %v", d, contract.DefaultApprovalWait)
	}
	if ids := v.pendingIDs(work.Approver()); !contains(ids, ref.ID) {
		t.Fatalf("Pending(Approver()) = %v, lacks %s", ids, ref.ID)
	}
	if ids := v.pendingIDs(other); len(ids) != 0 {
		t.Fatalf("Pending(another owner) = %v, want none", ids)
	}
	wantErr(t, "Approve by another owner", ap.Approve(v.ctx, other, ref.ID), work.ErrNotFound)
	wantErr(t, "Deny by another owner", ap.Deny(v.ctx, other, ref.ID), work.ErrNotFound)
	if st := v.status(o, ref.ID); st.State != work.StateQueued {
		t.Fatalf("after another owner's answers the Work is %s, want queued", st.State)
	}

	if err := ap.Approve(v.ctx, o, ref.ID); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != input || st.AwaitingApproval || st.Class != "" {
		t.Fatalf("approved Work = %+v, output %q; want completed with its input echoed", st, out)
	}
	wantErr(t, "a second Approve", ap.Approve(v.ctx, o, ref.ID), work.ErrNotFound)
	wantErr(t, "Deny after Approve", ap.Deny(v.ctx, o, ref.ID), work.ErrNotFound)
	if ids := v.pendingIDs(o); len(ids) != 0 {
		t.Fatalf("Pending after the approval = %v, want none", ids)
	}
	v.notice(sub, work.NoticeSettled, ref.ID)
	v.wantPath(ref.ID, []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventApproved,
		observe.EventRunning, observe.EventCompleted}, observe.EventDenied)
	v.noCanary()
}

// approvalDeny: the approver role denies; the Work ends cancelled with
// ClassDenied and never runs.
func (s *suite) approvalDeny(t *testing.T) {
	v := s.env(t, nil)
	ap := v.e
	o := owner(t, "deny")
	ref := v.held(o, Echo, "deny me "+canary, 0)
	if err := ap.Deny(v.ctx, work.Approver(), ref.ID); err != nil {
		t.Fatalf("Deny(Approver()): %v", err)
	}
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.Class != work.ClassDenied || out != "" || !st.StartedAt.IsZero() {
		t.Fatalf("denied Work = %+v, output %q; want cancelled, class %s, never started", st, out, work.ClassDenied)
	}
	wantErr(t, "Approve after Deny", ap.Approve(v.ctx, o, ref.ID), work.ErrNotFound)
	wantErr(t, "Approve(Approver()) after Deny", ap.Approve(v.ctx, work.Approver(), ref.ID), work.ErrNotFound)
	evs := v.wantPath(ref.ID, []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventDenied,
		observe.EventCancelled}, observe.EventRunning, observe.EventApproved)
	for _, e := range evs {
		if e.Type == observe.EventCancelled && e.ErrorClass != work.ClassDenied {
			t.Errorf("cancelled event has ErrorClass %q, want %q", e.ErrorClass, work.ClassDenied)
		}
	}
	v.noCanary()
}

// approvalTimeout: no answer within ApprovalTimeout ends the Work
// cancelled with ClassApprovalTimeout.
func (s *suite) approvalTimeout(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "tmo")
	ref := v.held(o, Echo, "nobody answers "+canary, 300*time.Millisecond)
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.Class != work.ClassApprovalTimeout || !st.StartedAt.IsZero() {
		t.Fatalf("timed-out Work = %+v; want cancelled, class %s, never started", st, work.ClassApprovalTimeout)
	}
	wantErr(t, "Approve after the timeout", v.e.Approve(v.ctx, o, ref.ID), work.ErrNotFound)
	evs := v.wantPath(ref.ID, []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventCancelled},
		observe.EventRunning, observe.EventApproved, observe.EventDenied)
	for _, e := range evs {
		if e.Type == observe.EventCancelled && e.ErrorClass != work.ClassApprovalTimeout {
			t.Errorf("cancelled event has ErrorClass %q, want %q", e.ErrorClass, work.ClassApprovalTimeout)
		}
	}
	v.noCanary()
}

// approvalHoldsNoSlot: with one running slot, a held Work neither takes
// it nor blocks a later Work of the same owner and target; it still
// counts against the owner's outstanding limit. Approved, it runs.
func (s *suite) approvalHoldsNoSlot(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning, c.MaxOutstanding = 1, 2 })
	o := owner(t, "slot")
	token, hc := newControl(t, "")
	ref := v.held(o, Func, token, 0)
	later, lc := v.running(o, Func, "") // runs: the held Work holds no slot and blocks no FIFO
	_, err := v.e.Start(v.ctx, v.spec(o, Echo, "x"))
	wantErr(t, "a third Start with the held Work outstanding", err, work.ErrLimit)
	v.finish(lc, "later", nil)
	if st, out := v.settle(o, later.ID); st.State != work.StateCompleted || out != "later" {
		t.Fatalf("the later Work = %+v, %q; want completed", st, out)
	}
	select {
	case <-hc.started:
		t.Fatal("the held Work ran before it was approved")
	default:
	}
	if st := v.status(o, ref.ID); st.State != work.StateQueued || !st.AwaitingApproval {
		t.Fatalf("held Work = %+v; want queued, awaiting approval", st)
	}
	if err := v.e.Approve(v.ctx, o, ref.ID); err != nil {
		t.Fatalf("Approve: %v", err)
	}
	v.waitStarted(hc)
	v.finish(hc, "approved", nil)
	if st, out := v.settle(o, ref.ID); st.State != work.StateCompleted || out != "approved" {
		t.Fatalf("approved Work = %+v, %q; want completed", st, out)
	}
}

// approvalCancelRelease: Cancel and Release end a held Work (cancelled,
// ClassCancelled), and it awaits approval no more.
func (s *suite) approvalCancelRelease(t *testing.T) {
	v := s.env(t, nil)
	ap := v.e
	o := owner(t, "cxl")
	ref := v.held(o, Echo, "cancel me", 0)
	r, err := v.e.Cancel(v.ctx, o, ref.ID)
	if err != nil || !r.Accepted {
		t.Fatalf("Cancel = %+v, %v; want accepted", r, err)
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.Class != work.ClassCancelled {
		t.Fatalf("cancelled held Work = %+v; want cancelled, class %s", st, work.ClassCancelled)
	}
	wantErr(t, "Approve after Cancel", ap.Approve(v.ctx, o, ref.ID), work.ErrNotFound)
	v.wantPath(ref.ID, []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventCancelled},
		observe.EventRunning, observe.EventApproved, observe.EventDenied)

	rel := v.held(o, Echo, "release me", 0)
	if err := v.e.Release(v.ctx, o); err != nil {
		t.Fatalf("Release: %v", err)
	}
	v.eventually("the released Work's cancellation", func() bool {
		evs := byWork(v.rec.Events())[rel.ID]
		return hasTerminal(evs) && !contains(v.pendingIDs(work.Approver()), rel.ID)
	})
	for _, e := range byWork(v.rec.Events())[rel.ID] {
		if e.Type == observe.EventRunning {
			t.Fatal("the released held Work ran")
		}
		if e.Type == observe.EventCancelled && e.ErrorClass != work.ClassCancelled {
			t.Errorf("released Work's cancelled event has ErrorClass %q, want %q", e.ErrorClass, work.ClassCancelled)
		}
	}
	wantErr(t, "Approve(Approver()) after Release", ap.Approve(v.ctx, work.Approver(), rel.ID), work.ErrNotFound)
}

// approvalMisuse: answers to what does not await approval are
// ErrNotFound; the zero Owner is ErrInvalidOwner; the approver role starts
// nothing; a foreground call cannot wait for approval.
func (s *suite) approvalMisuse(t *testing.T) {
	v := s.env(t, nil)
	ap := v.e
	o := owner(t, "mis")
	plain, c := v.running(o, Func, "")
	wantErr(t, "Approve of a Work that needs none", ap.Approve(v.ctx, o, plain.ID), work.ErrNotFound)
	wantErr(t, "Deny of a Work that needs none", ap.Deny(v.ctx, work.Approver(), plain.ID), work.ErrNotFound)
	v.finish(c, "", nil)
	wantErr(t, "Approve of an empty id", ap.Approve(v.ctx, o, ""), work.ErrNotFound)
	wantErr(t, "Approve of an unknown id", ap.Approve(v.ctx, work.Approver(), "00000000000000000000000000000000"), work.ErrNotFound)
	wantErr(t, "Approve(zero owner)", ap.Approve(v.ctx, work.Owner{}, plain.ID), work.ErrInvalidOwner)
	wantErr(t, "Deny(zero owner)", ap.Deny(v.ctx, work.Owner{}, plain.ID), work.ErrInvalidOwner)
	_, err := ap.Pending(v.ctx, work.Owner{})
	wantErr(t, "Pending(zero owner)", err, work.ErrInvalidOwner)
	if ids := v.pendingIDs(owner(t, "nobody")); len(ids) != 0 {
		t.Fatalf("Pending(unknown owner) = %v, want none", ids)
	}
	spec := v.spec(work.Approver(), Echo, "x")
	_, err = v.e.Start(v.ctx, spec)
	wantErr(t, "Start as Approver()", err, work.ErrInvalidOwner)
	spec = v.spec(o, Echo, "x")
	spec.NeedsApproval = true
	_, err = v.e.Call(v.ctx, spec)
	wantErr(t, "Call(NeedsApproval)", err, work.ErrInvalidSpec)
	spec.ApprovalTimeout = -time.Second
	_, err = v.e.Start(v.ctx, spec)
	wantErr(t, "Start with a negative ApprovalTimeout", err, work.ErrInvalidSpec)
}
