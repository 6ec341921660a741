package work_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// TestApprovalNotice: a NoticeApproval goes to the owner's Subscriptions
// only; a settlement finding the buffer full takes the place of the
// oldest approval notice, never the other way round.
func TestApprovalNotice(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := work.NewOwner("note")
	sub, err := h.s.Subscribe(ctx, o, 2)
	if err != nil {
		t.Fatal(err)
	}
	other, err := h.s.Subscribe(ctx, work.NewOwner("else"), 2)
	if err != nil {
		t.Fatal(err)
	}
	a := h.hold(o, fn, immediate("a"), "in "+canary, 0)
	b := h.hold(o, fn, immediate("b"), "in", 0)
	if err := h.s.Deny(ctx, o, a.ID); err != nil { // its settlement finds the buffer full of approval notices
		t.Fatal(err)
	}
	h.obs.waitTerminal(a.ID)
	want := []work.Notice{
		{Kind: work.NoticeApproval, WorkID: b.ID, Target: fn.Label, State: work.StateQueued, Time: t0},
		{Kind: work.NoticeSettled, WorkID: a.ID, Target: fn.Label, State: work.StateCancelled, Time: t0},
	}
	for i, w := range want {
		if n := <-sub.C(); n != w {
			t.Fatalf("notice %d = %+v, want %+v", i, n, w)
		}
	}
	if sub.Dropped() != 1 {
		t.Fatalf("Dropped = %d, want 1 (a's approval notice)", sub.Dropped())
	}
	select {
	case n := <-other.C():
		t.Fatalf("another owner's Subscription got %+v", n)
	default:
	}

	// A buffer full of settlements drops the approval notice.
	c, _ := h.s.Subscribe(ctx, o, 1)
	done, err := h.s.Start(ctx, work.Spec{Owner: o, Target: fn, Run: immediate("done")})
	if err != nil {
		t.Fatal(err)
	}
	// Result returns once the settlement is delivered, its notices sent.
	if st, _, err := h.s.Result(ctx, o, done.ID, work.MaxResultWait); err != nil || st.State != work.StateCompleted {
		t.Fatalf("Result = %+v, %v", st, err)
	}
	h.hold(o, fn, immediate("c"), "in", 0)
	if n := <-c.C(); n.Kind != work.NoticeSettled || n.WorkID != done.ID || c.Dropped() != 1 {
		t.Fatalf("notice %+v, dropped %d; want %s's settlement kept and the approval notice dropped", n, c.Dropped(), done.ID)
	}
}

// TestSettlementNoticeNeverMakesRoom: approval notices flood a small
// buffer while a reader drains it concurrently; as long as no more
// settlements are unread than the buffer holds, every settlement arrives,
// exactly once, and every notice not received is counted as dropped.
func TestSettlementNoticeNeverMakesRoom(t *testing.T) {
	const buffer, settlements, approvalsEach = 4, 2000, 3
	sub, publish, closeFn := work.NewSubscription(buffer, nil)
	tokens := make(chan struct{}, buffer) // one per settlement that may be unread
	for range buffer {
		tokens <- struct{}{}
	}
	var wg sync.WaitGroup
	got := make(map[string]int)
	approvals := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := range sub.C() {
			if n.Kind == work.NoticeSettled {
				got[n.WorkID]++
				tokens <- struct{}{}
			} else {
				approvals++
			}
		}
	}()
	// take waits for a settlement to be read; a dropped one never is.
	take := func() bool {
		select {
		case <-tokens:
			return true
		case <-time.After(10 * time.Second):
			return false
		}
	}
	defer wg.Wait()
	defer closeFn()
	for i := range settlements {
		for j := range approvalsEach {
			publish(work.Notice{Kind: work.NoticeApproval, WorkID: "a" + strconv.Itoa(i) + "-" + strconv.Itoa(j)})
		}
		if !take() {
			t.Fatalf("settlement notices were dropped (%d dropped in all)", sub.Dropped())
		}
		publish(work.Notice{Kind: work.NoticeSettled, WorkID: "s" + strconv.Itoa(i)})
	}
	for range buffer { // every settlement has been read
		if !take() {
			t.Fatalf("settlement notices were dropped (%d dropped in all)", sub.Dropped())
		}
	}
	closeFn()
	wg.Wait()
	for i := range settlements {
		if n := got["s"+strconv.Itoa(i)]; n != 1 {
			t.Fatalf("settlement %d received %d times, want 1", i, n)
		}
	}
	if len(got) != settlements {
		t.Fatalf("%d distinct settlements received, want %d", len(got), settlements)
	}
	if int(sub.Dropped()) != settlements*approvalsEach-approvals {
		t.Fatalf("Dropped = %d, want %d (the approval notices not received)", sub.Dropped(), settlements*approvalsEach-approvals)
	}
	t.Logf("approval notices received %d of %d", approvals, settlements*approvalsEach)
}
