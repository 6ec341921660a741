package temporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// eventually polls cond (Temporal is a real system: its effects arrive
// asynchronously) until it holds or a minute has passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a real server
	}
}

func hasEvent(rec *enginetest.Recorder, id string, typ observe.EventType) bool {
	for _, e := range eventsOf(rec, id) {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// pendingActivities is how many activities Work id's workflow has
// scheduled or running.
func pendingActivities(t *testing.T, c client.Client, id string) int {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(d.GetPendingActivities())
}

// TestApprovalAfterRestart: a Work awaiting approval holds no activity
// (workflow state and a timer only); the coordinator that started it
// goes away, and a new coordinator process (client and Engine) lists the
// request, approves it, and the Work runs and completes.
func TestApprovalAfterRestart(t *testing.T) {
	_, hostPort, ns := serverWithAddr(t)
	dial := func() client.Client {
		c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	opts := []temporal.Option{temporal.WithTaskQueue("approval-restart"), temporal.WithHeartbeatTimeout(5 * time.Second)}
	rec := &enginetest.Recorder{}
	wc := dial()
	defer wc.Close()
	w, err := temporal.NewWorker(wc, map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return "ran: " + in, nil }},
	}, append(opts, temporal.WithOptions(work.WithObserver(rec)))...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	o := work.NewOwner(fmt.Sprintf("approval-restart-%d", time.Now().UnixNano()))
	c1 := dial()
	e1 := temporal.New(c1, opts...)
	ref, err := e1.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: "held", NeedsApproval: true, Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the approval request", func() bool { return hasEvent(rec, ref.ID, observe.EventApprovalRequested) })
	if n := pendingActivities(t, wc, ref.ID); n != 0 {
		t.Fatalf("a Work awaiting approval has %d pending activities", n)
	}
	_ = e1.Close(context.Background())
	c1.Close() // the coordinator is gone

	c2 := dial()
	defer c2.Close()
	e2 := temporal.New(c2, opts...)
	defer e2.Close(context.Background())
	st, err := e2.Status(t.Context(), o, ref.ID)
	if err != nil || st.State != work.StateQueued || !st.AwaitingApproval {
		t.Fatalf("Status after the restart = %+v, %v; want queued, awaiting approval", st, err)
	}
	reqs, err := e2.Pending(t.Context(), work.Approver())
	if err != nil || len(reqs) != 1 || reqs[0].Work.ID != ref.ID || reqs[0].Input != "held" || reqs[0].Owner != o.ID() {
		t.Fatalf("Pending(Approver()) after the restart = %+v, %v", reqs, err)
	}
	if err := e2.Approve(t.Context(), o, ref.ID); err != nil {
		t.Fatal(err)
	}
	st, out := settle(t, e2, o, ref.ID)
	if st.State != work.StateCompleted || out != "ran: held" || st.AwaitingApproval {
		t.Fatalf("approved after the restart: %+v %q", st, out)
	}
	if !inOrder(eventsOf(rec, ref.ID), []observe.EventType{observe.EventQueued, observe.EventApprovalRequested, observe.EventApproved, observe.EventRunning, observe.EventCompleted}) {
		t.Fatalf("events %s", types(eventsOf(rec, ref.ID)))
	}
	if reqs, err := e2.Pending(t.Context(), work.Approver()); err != nil || len(reqs) != 0 {
		t.Fatalf("Pending after the approval = %+v, %v", reqs, err)
	}
}

// TestApprovedJob: a job that needs approval is submitted only once
// approved; denied, it is never submitted.
func TestApprovedJob(t *testing.T) {
	f := newFakeJobs(func(int) (work.Poll, error) { return work.Poll{State: work.PollDone, Output: "out"}, nil })
	rec := &enginetest.Recorder{}
	eng, _ := deploy(t, "apprjob", map[string]temporal.Child{"batch": {Kind: work.KindFunction, Job: f.job()}},
		[]temporal.Option{temporal.WithOptions(work.WithObserver(rec))}, nil)
	o := work.NewOwner(fmt.Sprintf("apprjob-%d", time.Now().UnixNano()))
	spec := jobSpec(o, "in", f.job())
	spec.NeedsApproval = true
	ok, err := eng.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	denied, err := eng.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the approval requests", func() bool {
		return hasEvent(rec, ok.ID, observe.EventApprovalRequested) && hasEvent(rec, denied.ID, observe.EventApprovalRequested)
	})
	if subs, _, _ := f.counts(); len(subs) != 0 {
		t.Fatalf("submitted before the approval: %v", subs)
	}
	if err := eng.Deny(t.Context(), o, denied.ID); err != nil {
		t.Fatal(err)
	}
	if err := eng.Approve(t.Context(), work.Approver(), ok.ID); err != nil {
		t.Fatal(err)
	}
	if st, out := settle(t, eng, o, ok.ID); st.State != work.StateCompleted || out != "out" {
		t.Fatalf("approved job = %+v %q", st, out)
	}
	if st, _ := settle(t, eng, o, denied.ID); st.State != work.StateCancelled || st.Class != work.ClassDenied {
		t.Fatalf("denied job = %+v", st)
	}
	if subs, _, _ := f.counts(); len(subs) != 1 || subs[ok.ID] != 1 {
		t.Fatalf("submits %v; want the approved job's once", subs)
	}
	for _, id := range []string{ok.ID, denied.ID} {
		if err := temporal.ReplayWork(workHistory(t, server(t), id), observe.NopObserver{}); err != nil {
			t.Fatalf("replaying %s's history: %v", id, err)
		}
	}
}
