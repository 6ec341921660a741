package work_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestApprovalChaos: held Works on the system clock are approved, denied,
// cancelled, released and timed out from many goroutines at once, then
// the engine closes. Every Work has exactly one terminal event, with
// the class of the path that won; nothing stays pending, live or armed.
func TestApprovalChaos(t *testing.T) {
	n := scale(400, 20_000)
	const owners = 8
	o := newObs()
	s := work.New(work.WithObserver(o), work.WithMaxRunning(4), work.WithMaxOutstanding(n), work.WithMaxStarts(0))
	ctx := context.Background()
	refs := make([]work.Ref, n)
	own := make([]work.Owner, n)
	for i := range refs {
		own[i] = work.NewOwner(fmt.Sprint("chaos-", i%owners))
		ref, err := s.Start(ctx, work.Spec{Owner: own[i], Target: fn, Run: immediate("ok"), Input: "in " + canary,
			NeedsApproval: true, ApprovalTimeout: time.Duration(1+rand.IntN(400)) * time.Millisecond})
		if err != nil {
			t.Fatalf("Start %d: %v", i, err)
		}
		refs[i] = ref
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				who := own[i]
				if rand.IntN(2) == 0 {
					who = work.Approver()
				}
				switch rand.IntN(5) {
				case 0, 1:
					_ = s.Approve(ctx, who, refs[i].ID)
				case 2:
					_ = s.Deny(ctx, who, refs[i].ID)
				case 3:
					_, _ = s.Cancel(ctx, own[i], refs[i].ID)
				}
				if i%97 == 0 {
					_ = s.Release(ctx, own[i])
				}
				_, _ = s.Pending(ctx, who)
				_, _ = s.Snapshot(ctx)
			}
		}()
	}
	wg.Wait()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	classes := map[string]int{}
	for _, ref := range refs {
		ev := o.waitTerminal(ref.ID)
		evs := o.events(ref.ID)
		if c := countTerminalEvents(evs); c != 1 {
			t.Fatalf("Work %s has %d terminal events: %v", ref.ID, c, eventTypes(evs))
		}
		approved, denied := hasEvent(evs, observe.EventApproved), hasEvent(evs, observe.EventDenied)
		switch {
		case approved && denied:
			t.Fatalf("Work %s was both approved and denied: %v", ref.ID, eventTypes(evs))
		case denied && ev.ErrorClass != work.ClassDenied:
			t.Fatalf("denied Work %s ended %s (%q)", ref.ID, ev.Type, ev.ErrorClass)
		case !approved && hasEvent(evs, observe.EventRunning):
			t.Fatalf("Work %s ran unapproved: %v", ref.ID, eventTypes(evs))
		}
		classes[string(ev.Type)+"/"+ev.ErrorClass]++
	}
	t.Logf("outcomes over %d Works: %v", n, classes)
	if snap, _ := s.Snapshot(ctx); len(snap.Live) != 0 || snap.AwaitingApproval != 0 {
		t.Fatalf("after Close: %d live, %d awaiting approval", len(snap.Live), snap.AwaitingApproval)
	}
	if reqs := o.ofType(observe.EventApprovalRequested); len(reqs) != n {
		t.Fatalf("%d approval-requested events, want %d", len(reqs), n)
	}
	o.mu.Lock()
	dump := fmt.Sprintf("%#v", o.all)
	o.mu.Unlock()
	if strings.Contains(dump, canary) {
		t.Fatal("an event carries the approval input")
	}
}

func countTerminalEvents(evs []observe.Event) int {
	c := 0
	for _, e := range evs {
		if e.To.Terminal() {
			c++
		}
	}
	return c
}

func hasEvent(evs []observe.Event, typ observe.EventType) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
