package adaptertest

import (
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// projections: status, list and result (timeout 0, as a string and as a
// number) give the exact WorkStatus in every state, and the exact output
// once completed; never a result or failure payload.
func (s *suite) projections(t *testing.T) {
	for _, state := range states {
		t.Run(state, func(t *testing.T) {
			sc := s.scenario(t, state)
			p := sc.p
			if got := p.work("action", "status", "id", sc.id); got != sc.status {
				t.Errorf("status:\n got %s\nwant %s", got, sc.status)
			}
			if got := p.work("action", "list"); got != "["+sc.status+"]" {
				t.Errorf("list:\n got %s\nwant [%s]", got, sc.status)
			}
			want := sc.status
			if state == "completed" {
				want = exactOutput // the exact output, not JSON-wrapped
			}
			if got := p.work("action", "result", "id", sc.id, "timeout", "0s"); got != want {
				t.Errorf("result 0s:\n got %q\nwant %q", got, want)
			}
			if got := p.call("work", `{"action":"result","id":"`+sc.id+`","timeout":0}`); got != want {
				t.Errorf("result 0 (a number):\n got %q\nwant %q", got, want)
			}
			for i, req := range p.script.Requests() {
				if strings.Contains(req.Text(), failureText) {
					t.Errorf("coordinator request %d carries the child's failure text", i)
				}
			}
			p.finish()
		})
	}
}

// cancel: the receipt in every state; a queued Work is cancelled before it
// runs; a running one is cancel-requested and stops at its next model
// request; completion may win; an unrelated failure stays failed; terminal
// Work is not accepted.
func (s *suite) cancel(t *testing.T) {
	for _, state := range states {
		t.Run(state, func(t *testing.T) {
			sc := s.scenario(t, state)
			var want string
			switch {
			case state == "queued":
				want = `{"workId":"` + sc.id + `","accepted":true,"state":"cancelled","acceptedAt":"` + iso(2*time.Second) + `"}`
			case !sc.terminal():
				want = `{"workId":"` + sc.id + `","accepted":true,"state":"cancel-requested","acceptedAt":"` + iso(2*time.Second) + `"}`
			default:
				want = `{"workId":"` + sc.id + `","accepted":false,"state":"` + sc.final() + `","acceptedAt":"` + iso(2*time.Second) + `"}`
			}
			if got := sc.p.work("action", "cancel", "id", sc.id); got != want {
				t.Fatalf("cancel:\n got %s\nwant %s", got, want)
			}
			switch state {
			case "queued":
				if n := sc.k.requests(); n != 0 {
					t.Errorf("a Work cancelled while queued ran: its child made %d model requests", n)
				}
			case "running", "cancel-requested":
				// The child's call in flight finishes; its next model
				// request is never sent.
				sc.k.lookup()
				sc.v.wait(sc.id, observe.EventCancelled)
				if n := sc.k.requests(); n != 1 {
					t.Errorf("the cancelled child made %d model requests, want 1 (none after the cancel)", n)
				}
				if got := sc.p.work("action", "status", "id", sc.id); !strings.Contains(got, `"state":"cancelled"`) {
					t.Errorf("status after the cancel: %s", got)
				}
			}
			sc.p.finish()
		})
	}
	t.Run("CompletionMayWin", func(t *testing.T) {
		// The child's call in flight at the cancel answers: the Work
		// completes (and its result is exact) or ends cancelled, never
		// failed.
		sc := s.scenario(t, "cancel-requested")
		sc.k.reply(Text(exactOutput))
		switch sc.v.waitAny(sc.id, observe.EventCompleted, observe.EventCancelled, observe.EventFailed) {
		case observe.EventCompleted:
			if got := sc.p.work("action", "result", "id", sc.id); got != exactOutput {
				t.Errorf("result after completion won the race: %q", got)
			}
		case observe.EventCancelled:
			if got := sc.p.work("action", "result", "id", sc.id); !strings.Contains(got, `"state":"cancelled"`) || strings.Contains(got, "EXACT-OUTPUT") {
				t.Errorf("result of Work cancelled after its last answer: %s", got)
			}
		default:
			t.Errorf("a cancelled child whose call in flight answered failed")
		}
		sc.p.finish()
	})
	t.Run("UnrelatedFailure", func(t *testing.T) {
		sc := s.scenario(t, "cancel-requested")
		sc.k.reply(Fail(errorString(failureText)))
		sc.v.wait(sc.id, observe.EventFailed)
		got := sc.p.work("action", "status", "id", sc.id)
		if !strings.Contains(got, `"state":"failed"`) || strings.Contains(got, failureText) {
			t.Errorf("status after an unrelated failure: %s", got)
		}
		sc.p.finish()
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }

// detach: the receipt; afterwards every id action is not_found, list and
// the status block leave the Work out, and it runs on to its end.
func (s *suite) detach(t *testing.T) {
	sc := s.scenario(t, "running")
	p := sc.p
	if got, want := p.work("action", "detach", "id", sc.id), `{"id":"`+sc.id+`","detached":true}`; got != want {
		t.Fatalf("detach:\n got %s\nwant %s", got, want)
	}
	if sc.v.obs.has(sc.id, observe.EventCancelRequested) || sc.v.obs.has(sc.id, observe.EventCancelled) {
		t.Fatal("detach cancelled the Work; execution must continue")
	}
	for _, in := range [][]string{
		{"action", "status", "id", sc.id},
		{"action", "result", "id", sc.id, "timeout", "0s"},
		{"action", "cancel", "id", sc.id},
		{"action", "detach", "id", sc.id},
		{"action", "send", "id", sc.id, "message", "m"},
	} {
		if got := p.work(in...); got != notFound {
			t.Errorf("%s after detach: %s", in[1], got)
		}
	}
	if got := p.work("action", "list"); got != "[]" {
		t.Errorf("list after detach: %s", got)
	}
	if strings.Contains(p.last.Text(), "[background work]") {
		t.Errorf("the request after detach still shows the Work: %q", p.last.Last().Text)
	}
	// Execution continues: the child makes its next model request and
	// completes.
	sc.k.lookup()
	sc.k.await()
	sc.k.reply(Text(exactOutput))
	sc.v.wait(sc.id, observe.EventCompleted)
	p.finish()
}
