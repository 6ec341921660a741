package driver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestWorkStateCancel(t *testing.T) {
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		from, to observe.State
		accepted bool
	}{
		{work.StateQueued, work.StateCancelled, true},
		{work.StateRunning, work.StateCancelRequested, true},
		{work.StateCancelRequested, work.StateCancelRequested, true},
		{work.StateCompleted, work.StateCompleted, false},
		{work.StateFailed, work.StateFailed, false},
		{work.StateCancelled, work.StateCancelled, false},
	} {
		s := WorkState{State: tc.from}
		from, ev, r := s.Cancel(now.Add(-time.Minute), now)
		if from != tc.from || r != (CancelReply{Accepted: tc.accepted, State: tc.to, At: now}) || s.State != tc.to {
			t.Errorf("cancel of %s: from %s reply %+v, now %s; want %s %v %s", tc.from, from, r, s.State, tc.from, tc.accepted, tc.to)
		}
		if rc := r.Receipt("w"); rc != (work.CancelReceipt{WorkID: "w", Accepted: tc.accepted, State: tc.to, AcceptedAt: now}) {
			t.Errorf("cancel of %s: receipt %+v", tc.from, rc)
		}
		// An event for each transition made: a queued Work's lasted from
		// its creation.
		var want observe.Event
		switch tc.from {
		case work.StateQueued:
			want = Transition(tc.from, tc.to, observe.Event{Time: now, Duration: time.Minute})
		case work.StateRunning:
			want = Transition(tc.from, tc.to, observe.Event{Time: now})
		}
		if ev != want {
			t.Errorf("cancel of %s: event %+v, want %+v", tc.from, ev, want)
		}
		if finished := !s.Finished.IsZero(); finished != (tc.from == work.StateQueued) {
			t.Errorf("cancel of %s: finished %v", tc.from, s.Finished)
		}
	}
}

func TestWorkStateRecord(t *testing.T) {
	// Cancelled before it ran: class cancelled, nothing spent.
	s := WorkState{State: work.StateCancelled, Awaiting: true, Waiting: true, Rev: 3}
	r := s.Record("w")
	if r.ID != "w" || r.Class != work.ClassCancelled || r.Spent == nil || *r.Spent != (observe.Usage{}) || r.Attempt != 1 || r.Approval || r.Waiting || r.Rev != 3 {
		t.Fatalf("cancelled before running: %+v", r)
	}
	// Denied keeps its class; running tells no spending, waits and approval
	// only while they hold.
	if r := (&WorkState{State: work.StateCancelled, Class: work.ClassDenied}).Record("w"); r.Class != work.ClassDenied {
		t.Fatalf("denied: %+v", r)
	}
	spent := &observe.Usage{Turns: 2}
	if r := (&WorkState{State: work.StateRunning, Attempt: 2, Spent: spent, Waiting: true}).Record("w"); r.Spent != nil || !r.Waiting || r.Attempt != 2 || r.Class != "" {
		t.Fatalf("running: %+v", r)
	}
	if r := (&WorkState{State: work.StateQueued, Awaiting: true}).Record("w"); !r.Approval {
		t.Fatalf("awaiting: %+v", r)
	}
	// A lost attempt's usage is unknown: nil.
	if r := (&WorkState{State: work.StateFailed, Attempt: 1, Class: work.ClassWorkerLost}).Record("w"); r.Spent != nil || r.Class != work.ClassWorkerLost {
		t.Fatalf("lost: %+v", r)
	}
	if r := (&WorkState{State: work.StateCompleted, Attempt: 1, Spent: spent, HasResult: true}).Record("w"); r.Spent != spent || !r.HasResult {
		t.Fatalf("completed: %+v", r)
	}
}

func TestSettlement(t *testing.T) {
	for _, tc := range []struct {
		class     string
		requested bool
		state     observe.State
		want      string
	}{
		{"", false, work.StateCompleted, ""},
		{work.ClassCancelled, true, work.StateCancelled, ""},
		{work.ClassCancelled, false, work.StateFailed, work.ClassError},
		{work.ClassDeadline, true, work.StateFailed, work.ClassDeadline},
		{work.ClassResultTooLarge, false, work.StateFailed, work.ClassResultTooLarge},
	} {
		if st, class := Settlement(tc.class, tc.requested); st != tc.state || class != tc.want {
			t.Errorf("Settlement(%q, %v) = %s %q, want %s %q", tc.class, tc.requested, st, class, tc.state, tc.want)
		}
	}
}

func TestWorkStateSettle(t *testing.T) {
	created := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	started, now := created.Add(time.Second), created.Add(time.Minute)
	for _, tc := range []struct {
		name       string
		s          WorkState
		state      observe.State
		class      string
		want       observe.Event // Transition's, the zero Event for none
		wantResult bool
		wantClass  string
	}{
		{"completed", WorkState{State: work.StateRunning, Started: started}, work.StateCompleted, "",
			Transition(work.StateRunning, work.StateCompleted, observe.Event{Time: now, Duration: now.Sub(started), Bytes: 7}), true, ""},
		{"too large", WorkState{State: work.StateRunning, Started: started}, work.StateFailed, work.ClassResultTooLarge,
			Transition(work.StateRunning, work.StateFailed, observe.Event{Time: now, Duration: now.Sub(started), Bytes: 7, ErrorClass: work.ClassResultTooLarge}), false, work.ClassResultTooLarge},
		{"failed", WorkState{State: work.StateCancelRequested, Started: started}, work.StateFailed, work.ClassError,
			Transition(work.StateCancelRequested, work.StateFailed, observe.Event{Time: now, Duration: now.Sub(started), ErrorClass: work.ClassError}), false, work.ClassError},
		{"cancelled", WorkState{State: work.StateCancelRequested, Started: started}, work.StateCancelled, "",
			Transition(work.StateCancelRequested, work.StateCancelled, observe.Event{Time: now, Duration: now.Sub(started)}), false, ""},
		{"denied, never started", WorkState{State: work.StateQueued}, work.StateCancelled, work.ClassDenied,
			Transition(work.StateQueued, work.StateCancelled, observe.Event{Time: now, Duration: now.Sub(created), ErrorClass: work.ClassDenied}), false, work.ClassDenied},
		{"cancelled while queued, then settled", WorkState{State: work.StateCancelled, Class: work.ClassApprovalTimeout, Finished: started},
			work.StateCancelled, "", observe.Event{}, false, work.ClassApprovalTimeout},
		{"a clock behind the start", WorkState{State: work.StateRunning, Started: now.Add(time.Second)}, work.StateCompleted, "",
			Transition(work.StateRunning, work.StateCompleted, observe.Event{Time: now, Bytes: 7}), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			finished := s.Finished
			ev, changed := s.Settle(tc.state, tc.class, 7, created, now)
			if ev != tc.want || changed != (tc.want.Type != "") {
				t.Fatalf("event %+v changed %v, want %+v", ev, changed, tc.want)
			}
			if finished.IsZero() {
				finished = now
			}
			if s.State != tc.state || !s.Finished.Equal(finished) || s.HasResult != tc.wantResult || s.Class != tc.wantClass {
				t.Fatalf("state %+v", s)
			}
		})
	}
}

// TestWorkStateStart: the first start is a transition from queued whose
// queue wait runs from the approval (or the creation); a later attempt
// keeps the first start and reports nothing.
func TestWorkStateStart(t *testing.T) {
	created := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	approved, now := created.Add(time.Minute), created.Add(3*time.Minute)
	s := WorkState{State: work.StateQueued, Awaiting: true}
	if !s.AwaitsApproval() || !s.Record("w").Approval {
		t.Fatalf("awaiting: %+v", s)
	}
	s.Approve(approved)
	if s.AwaitsApproval() || s.Record("w").Approval || !s.Enqueued.Equal(approved) {
		t.Fatalf("approved: %+v", s)
	}
	// The stored name (Restate's census reads it).
	if b, err := json.Marshal(s); err != nil || !strings.Contains(string(b), `"Enqueued":"2026-12-04T00:01:00Z"`) {
		t.Fatalf("stored %s %v", b, err)
	}
	ev, first := s.Start(1, created, now)
	want := Transition(work.StateQueued, work.StateRunning, observe.Event{Time: now, QueueWait: 2 * time.Minute})
	if !first || ev != want || s.State != work.StateRunning || s.Attempt != 1 || !s.Started.Equal(now) {
		t.Fatalf("first start: %+v %v %+v", ev, first, s)
	}
	if ev, first := s.Start(2, created, now.Add(time.Hour)); first || ev != (observe.Event{}) || s.Attempt != 2 || !s.Started.Equal(now) {
		t.Fatalf("second attempt: %+v %v %+v", ev, first, s)
	}
	// Never awaiting: the wait runs from the creation.
	s = WorkState{State: work.StateQueued}
	if ev, _ := s.Start(1, created, now); ev.QueueWait != 3*time.Minute {
		t.Fatalf("queue wait %s", ev.QueueWait)
	}
	// Cancelled while awaiting: no longer awaiting.
	s = WorkState{State: work.StateCancelled, Awaiting: true}
	if s.AwaitsApproval() {
		t.Fatal("a cancelled Work awaits approval")
	}
}

// TestWorkStateSpend: what an attempt ended with is kept, and reported
// budget first, then a usage that is known and not zero.
func TestWorkStateSpend(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	u := &observe.Usage{Turns: 3}
	for _, tc := range []struct {
		name   string
		budget string
		spent  *observe.Usage
		want   []observe.Event
	}{
		{"budget and usage", "turns", u, []observe.Event{{Type: observe.EventBudgetExhausted, Budget: "turns", Time: now},
			{Type: observe.EventUsage, Usage: *u, Time: now}}},
		{"usage", "", u, []observe.Event{{Type: observe.EventUsage, Usage: *u, Time: now}}},
		{"zero usage", "", &observe.Usage{}, nil},
		{"unknown", "tokens", nil, []observe.Event{{Type: observe.EventBudgetExhausted, Budget: "tokens", Time: now}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := WorkState{State: work.StateRunning, Attempt: 1}
			p := observe.Progress{Done: 2}
			evs := s.Spend(tc.budget, p, tc.spent, now)
			if len(evs) != len(tc.want) {
				t.Fatalf("events %+v, want %+v", evs, tc.want)
			}
			for i := range evs {
				if evs[i] != tc.want[i] {
					t.Fatalf("event %d %+v, want %+v", i, evs[i], tc.want[i])
				}
			}
			if s.Budget != tc.budget || s.Progress != p || s.Spent != tc.spent {
				t.Fatalf("kept %+v", s)
			}
		})
	}
}

// TestAwaitsApprovalFor: a Work awaiting approval is its owner's to read
// and answer while it is not detached, and the approver role's always;
// one that does not await approval is no one's.
func TestAwaitsApprovalFor(t *testing.T) {
	awaiting := WorkState{State: work.StateQueued, Awaiting: true}
	detached := WorkState{State: work.StateQueued, Awaiting: true, Detached: true}
	approved := WorkState{State: work.StateQueued}
	for _, tc := range []struct {
		name string
		s    WorkState
		r    AnswerRequest
		want bool
	}{
		{"owner", awaiting, AnswerRequest{Owner: "o"}, true},
		{"another owner", awaiting, AnswerRequest{Owner: "p"}, false},
		{"the zero owner", awaiting, AnswerRequest{}, false},
		{"approver", awaiting, AnswerRequest{Approver: true}, true},
		{"owner, detached", detached, AnswerRequest{Owner: "o"}, false},
		{"approver, detached", detached, AnswerRequest{Approver: true}, true},
		{"owner, not awaiting", approved, AnswerRequest{Owner: "o"}, false},
		{"approver, not awaiting", approved, AnswerRequest{Approver: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.AwaitsApprovalFor("o", tc.r); got != tc.want {
				t.Fatalf("AwaitsApprovalFor = %v, want %v", got, tc.want)
			}
		})
	}
}
