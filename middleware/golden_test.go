package middleware_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

const exactOutput = "the exact output"

// scenario leaves one Work of owner "coord" (label "research", child id
// "researcher-v1", an agent) in a given state, with the fake clock at
// t0+2s.
type scenario struct {
	state string
	// setup returns the owner's Set and the Work's id.
	setup func(e *env) (*middleware.Set, string)
	// status is the golden status JSON, with <ID> for the id.
	status string
}

func researchSet(e *env, g *gate) *middleware.Set {
	return e.prepare("coord", map[string]any{
		"research": middleware.Backgroundable(middleware.Child{ID: "researcher-v1", Kind: work.KindAgent,
			Description: "Researches a topic.", Run: g.run}),
	})
}

// statusJSON is the golden WorkStatus; negative durations leave a
// timestamp out.
func statusJSON(state string, created, started, finished time.Duration, available bool) string {
	s := `{"work":{"kind":"work.ref","id":"<ID>","targetId":"researcher-v1","guarantees":{"execution":"process-local","rejoin":"process-local"}},` +
		`"targetLabel":"research","state":"` + state + `","attachment":"attached","attempt":1,"createdAt":"` + iso(created) + `"`
	if started >= 0 {
		s += `,"startedAt":"` + iso(started) + `"`
	}
	if finished >= 0 {
		s += `,"finishedAt":"` + iso(finished) + `"`
	}
	return s + fmt.Sprintf(`,"resultAvailable":%t}`, available)
}

const none = -1

// queueBehindBlocker occupies the only running slot with another owner's
// Work, so the next Work stays queued.
func queueBehindBlocker(e *env) {
	b := e.gate("", nil)
	other := e.prepare("other", map[string]any{
		"blocker": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: b.run}),
	})
	launch(e.t, other, "blocker", "x")
}

func scenarios() []scenario {
	return []scenario{
		{state: "queued", status: statusJSON("queued", time.Second, none, none, false),
			setup: func(e *env) (*middleware.Set, string) {
				queueBehindBlocker(e)
				e.clock.Advance(time.Second)
				s := researchSet(e, e.gate(exactOutput, nil))
				id := launch(e.t, s, "research", "task")
				e.clock.Advance(time.Second)
				return s, id
			}},
		{state: "running", status: statusJSON("running", 0, 0, none, false),
			setup: func(e *env) (*middleware.Set, string) {
				g := e.gate(exactOutput, nil)
				s := researchSet(e, g)
				id := launch(e.t, s, "research", "task")
				<-g.started
				e.clock.Advance(2 * time.Second)
				return s, id
			}},
		{state: "cancel-requested", status: statusJSON("cancel-requested", 0, 0, none, false),
			setup: func(e *env) (*middleware.Set, string) {
				g := e.gate(exactOutput, nil) // ignores cancellation
				s := researchSet(e, g)
				id := launch(e.t, s, "research", "task")
				<-g.started
				e.clock.Advance(time.Second)
				if _, err := e.sup.Cancel(context.Background(), s.Owner(), id); err != nil {
					e.t.Fatal(err)
				}
				e.clock.Advance(time.Second)
				return s, id
			}},
		{state: "completed", status: statusJSON("completed", 0, 0, time.Second, true),
			setup: func(e *env) (*middleware.Set, string) {
				g := e.gate(exactOutput, nil)
				s := researchSet(e, g)
				id := launch(e.t, s, "research", "task")
				<-g.started
				e.clock.Advance(time.Second)
				g.open()
				e.obs.wait(id, work.EventCompleted)
				e.clock.Advance(time.Second)
				return s, id
			}},
		{state: "failed", status: statusJSON("failed", 0, 0, time.Second, false),
			setup: func(e *env) (*middleware.Set, string) {
				g := e.gate("", errBoom)
				s := researchSet(e, g)
				id := launch(e.t, s, "research", "task")
				<-g.started
				e.clock.Advance(time.Second)
				g.open()
				e.obs.wait(id, work.EventFailed)
				e.clock.Advance(time.Second)
				return s, id
			}},
		{state: "cancelled", status: statusJSON("cancelled", 0, 0, time.Second, false),
			setup: func(e *env) (*middleware.Set, string) {
				g := e.gate(exactOutput, nil)
				g.cooperative = true
				s := researchSet(e, g)
				id := launch(e.t, s, "research", "task")
				<-g.started
				e.clock.Advance(time.Second)
				if _, err := e.sup.Cancel(context.Background(), s.Owner(), id); err != nil {
					e.t.Fatal(err)
				}
				e.obs.wait(id, work.EventCancelled)
				e.clock.Advance(time.Second)
				return s, id
			}},
		{state: "cancelled-while-queued", status: statusJSON("cancelled", time.Second, none, time.Second, false),
			setup: func(e *env) (*middleware.Set, string) {
				queueBehindBlocker(e)
				e.clock.Advance(time.Second)
				s := researchSet(e, e.gate(exactOutput, nil))
				id := launch(e.t, s, "research", "task")
				if _, err := e.sup.Cancel(context.Background(), s.Owner(), id); err != nil {
					e.t.Fatal(err)
				}
				e.clock.Advance(time.Second)
				return s, id
			}},
	}
}

func terminal(state string) bool {
	return state == "completed" || state == "failed" || state == "cancelled" || state == "cancelled-while-queued"
}

func finalState(state string) string {
	if state == "cancelled-while-queued" {
		return "cancelled"
	}
	return state
}

const notFound = `{"status":"not_found"}`

// TestWorkToolGoldens checks every action's exact JSON in every state.
func TestWorkToolGoldens(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.state, func(t *testing.T) {
			// check runs one action on a fresh scenario.
			check := func(name string, f func(e *env, s *middleware.Set, id string) (got, want string)) {
				t.Run(name, func(t *testing.T) {
					e := newEnv(t, work.WithMaxRunning(1))
					s, id := sc.setup(e)
					got, want := f(e, s, id)
					if got = subst(got, map[string]string{id: "<ID>"}); got != want {
						t.Errorf("got\n%s\nwant\n%s", got, want)
					}
				})
			}
			check("status", func(e *env, s *middleware.Set, id string) (string, string) {
				return act(t, s, map[string]string{"action": "status", "id": id}), sc.status
			})
			check("list", func(e *env, s *middleware.Set, id string) (string, string) {
				return act(t, s, map[string]string{"action": "list"}), "[" + sc.status + "]"
			})
			check("result 0s", func(e *env, s *middleware.Set, id string) (string, string) {
				want := sc.status
				if sc.state == "completed" {
					want = exactOutput // not JSON-wrapped
				}
				return act(t, s, map[string]string{"action": "result", "id": id, "timeout": "0s"}), want
			})
			check("result 0 seconds as a number", func(e *env, s *middleware.Set, id string) (string, string) {
				want := sc.status
				if sc.state == "completed" {
					want = exactOutput
				}
				return call(t, tool(t, s, middleware.WorkToolName), `{"action":"result","id":"`+id+`","timeout":0}`), want
			})
			check("result default timeout", func(e *env, s *middleware.Set, id string) (string, string) {
				if terminal(sc.state) {
					// Terminal Work answers at once: the fake clock never
					// moves, so a wait would hang here.
					want := sc.status
					if sc.state == "completed" {
						want = exactOutput
					}
					return act(t, s, map[string]string{"action": "result", "id": id}), want
				}
				got := make(chan string, 1)
				go func() { got <- act(t, s, map[string]string{"action": "result", "id": id}) }()
				e.clock.BlockUntil(1)
				e.clock.Advance(work.MaxResultWait - time.Millisecond)
				select {
				case out := <-got:
					t.Fatalf("result returned before 30s: %s", out)
				default:
				}
				e.clock.Advance(time.Millisecond)
				return <-got, sc.status
			})
			check("cancel", func(e *env, s *middleware.Set, id string) (string, string) {
				var want string
				switch sc.state {
				case "queued":
					want = `{"workId":"<ID>","accepted":true,"state":"cancelled","acceptedAt":"` + iso(2*time.Second) + `"}`
				case "running", "cancel-requested":
					want = `{"workId":"<ID>","accepted":true,"state":"cancel-requested","acceptedAt":"` + iso(2*time.Second) + `"}`
				default:
					want = `{"workId":"<ID>","accepted":false,"state":"` + finalState(sc.state) + `","acceptedAt":"` + iso(2*time.Second) + `"}`
				}
				return act(t, s, map[string]string{"action": "cancel", "id": id}), want
			})
			check("detach", func(e *env, s *middleware.Set, id string) (string, string) {
				out := act(t, s, map[string]string{"action": "detach", "id": id})
				for _, a := range []map[string]string{
					{"action": "status", "id": id},
					{"action": "result", "id": id},
					{"action": "cancel", "id": id},
					{"action": "detach", "id": id},
					{"action": "send", "id": id, "message": "m"},
				} {
					if got := act(t, s, a); got != notFound {
						t.Errorf("%s after detach: %s", a["action"], got)
					}
				}
				if got := act(t, s, map[string]string{"action": "list"}); got != "[]" {
					t.Errorf("list after detach: %s", got)
				}
				if got := s.StatusBlock(context.Background()); got != "" {
					t.Errorf("status block after detach: %q", got)
				}
				return out, `{"id":"<ID>","detached":true}`
			})
			check("send", func(e *env, s *middleware.Set, id string) (string, string) {
				ctx := middleware.WithCallID(context.Background(), "call-1")
				send := map[string]string{"action": "send", "id": id, "message": "focus on 2025"}
				out := actCtx(t, ctx, s, send)
				if terminal(sc.state) {
					return out, `{"error":{"code":"terminal","message":"work is already terminal"}}`
				}
				want := `{"workId":"<ID>","id":"<ID>.1","cursor":"1","acceptedAt":"` + iso(2*time.Second) + `","outcome":"accepted"}`
				e.clock.Advance(time.Second)
				if again := actCtx(t, ctx, s, send); again != out {
					t.Errorf("same call id, same message: %s, want the first receipt %s", again, out)
				}
				conflict := map[string]string{"action": "send", "id": id, "message": "something else"}
				if got := actCtx(t, ctx, s, conflict); got != `{"error":{"code":"conflict","message":"command id was already used with a different message"}}` {
					t.Errorf("same call id, other message: %s", got)
				}
				next := actCtx(t, middleware.WithCallID(context.Background(), "call-2"), s, conflict)
				wantNext := `{"workId":"<ID>","id":"<ID>.2","cursor":"2","acceptedAt":"` + iso(3*time.Second) + `","outcome":"accepted"}`
				if got := subst(next, map[string]string{id: "<ID>"}); got != wantNext {
					t.Errorf("next call id: %s, want %s", got, wantNext)
				}
				return out, want
			})
			check("not_found", func(e *env, s *middleware.Set, id string) (string, string) {
				foreign := e.prepare("stranger", map[string]any{
					"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: newGate("", nil).run}),
				})
				ids := map[string]string{
					"unknown":    "0123456789abcdef0123456789abcdef",
					"malformed":  "not-an-id",
					"padded":     " " + id,
					"prefix":     id[:31],
					"scope-like": "coord/" + id,
				}
				if up := toUpper(id); up != id {
					ids["uppercase"] = up
				}
				for _, action := range []string{"status", "result", "cancel", "detach", "send"} {
					for name, bad := range ids {
						in := map[string]string{"action": action, "id": bad, "timeout": "0s"}
						if action == "send" {
							in = map[string]string{"action": action, "id": bad, "message": "m"}
						}
						if got := act(t, s, in); got != notFound {
							t.Errorf("%s %s: %s", action, name, got)
						}
					}
					// Another owner cannot see it.
					in := map[string]string{"action": action, "id": id, "timeout": "0s"}
					if action == "send" {
						in = map[string]string{"action": action, "id": id, "message": "m"}
					}
					if got := act(t, foreign, in); got != notFound {
						t.Errorf("%s by another owner: %s", action, got)
					}
				}
				if got := act(t, foreign, map[string]string{"action": "list"}); got != "[]" {
					t.Errorf("list by another owner: %s", got)
				}
				// The foreign calls changed nothing.
				return act(t, s, map[string]string{"action": "status", "id": id}), sc.status
			})
		})
	}
}

func toUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestSendToFunctionChild: guidance is for agent children only.
func TestSendToFunctionChild(t *testing.T) {
	e := newEnv(t)
	g := e.gate("", nil)
	s := e.prepare("coord", map[string]any{
		"fetch": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: g.run}),
	})
	id := launch(t, s, "fetch", "x")
	got := act(t, s, map[string]string{"action": "send", "id": id, "message": "hurry"})
	if want := `{"error":{"code":"not_agent","message":"guidance is accepted only by agent children"}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestResultWaitsForCompletion: result returns the output as soon as the
// child completes, without the clock moving.
func TestResultWaitsForCompletion(t *testing.T) {
	e := newEnv(t)
	g := e.gate("done: ✓", nil)
	s := researchSet(e, g)
	id := launch(t, s, "research", "task")
	got := make(chan string, 1)
	go func() { got <- act(t, s, map[string]string{"action": "result", "id": id, "timeout": "20s"}) }()
	e.clock.BlockUntil(1)
	g.open()
	if out := <-got; out != "done: ✓" {
		t.Fatalf("result = %q", out)
	}
	if n := e.clock.Pending(); n != 0 {
		t.Fatalf("the wait's timer was not stopped: %d pending", n)
	}
}

// TestResultTimeoutCapped: a timeout over 30 s is capped, not refused; a
// shorter one is honoured. timeout is a duration string or a JSON number
// of seconds (the raw JSON value below).
func TestResultTimeoutCapped(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		wait    time.Duration
	}{
		{`"45s"`, 30 * time.Second},
		{`"2 minutes"`, 30 * time.Second},
		{`"1h"`, 30 * time.Second},
		{`"30 seconds"`, 30 * time.Second},
		{`"10s"`, 10 * time.Second},
		{`"1 minute 30 seconds"`, 30 * time.Second},
		{`"1.5 seconds"`, 1500 * time.Millisecond},
		{`10`, 10 * time.Second},
		{`30`, 30 * time.Second},
		{`45`, 30 * time.Second},
		{`1e9`, 30 * time.Second},
		{`1.5`, 1500 * time.Millisecond},
		{`0.25`, 250 * time.Millisecond},
		{`2E1`, 20 * time.Second},
		{" 7\n", 7 * time.Second},
	} {
		t.Run(tc.timeout, func(t *testing.T) {
			e := newEnv(t)
			g := e.gate("", nil)
			s := researchSet(e, g)
			id := launch(t, s, "research", "task")
			got := make(chan string, 1)
			in := `{"action":"result","id":"` + id + `","timeout":` + tc.timeout + `}`
			returned, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				defer cancel()
				got <- call(t, tool(t, s, middleware.WorkToolName), in)
			}()
			if err := e.clock.BlockUntilContext(returned, 1); err != nil {
				t.Fatalf("returned without waiting: %s", <-got)
			}
			e.clock.Advance(tc.wait - time.Millisecond)
			select {
			case out := <-got:
				t.Fatalf("returned before %v: %s", tc.wait, out)
			default:
			}
			if n := e.clock.Pending(); n != 1 {
				t.Fatalf("pending timers = %d, want the wait's", n)
			}
			e.clock.Advance(time.Millisecond)
			want := statusJSON("running", 0, 0, none, false)
			if out := subst(<-got, map[string]string{id: "<ID>"}); out != want {
				t.Fatalf("got %s, want %s", out, want)
			}
		})
	}
}

// TestResultReturnsWhenCallerCancels: the wait ends with the caller's
// context, returning the status.
func TestResultReturnsWhenCallerCancels(t *testing.T) {
	e := newEnv(t)
	s := researchSet(e, e.gate("", nil))
	id := launch(t, s, "research", "task")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 1)
	go func() { got <- actCtx(t, ctx, s, map[string]string{"action": "result", "id": id}) }()
	e.clock.BlockUntil(1)
	cancel()
	if out := subst(<-got, map[string]string{id: "<ID>"}); out != statusJSON("running", 0, 0, none, false) {
		t.Fatalf("got %s", out)
	}
}

// TestListOrderAndCap: unfinished first, newest first, at most 50.
func TestListOrderAndCap(t *testing.T) {
	e := newEnv(t, work.WithMaxStarts(0), work.WithMaxOutstanding(100), work.WithMaxRunning(100))
	done := e.gate("ok", nil)
	done.open()
	running := e.gate("", nil)
	s := e.prepare("coord", map[string]any{
		"a": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: done.run}),
		"b": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: running.run}),
	})
	var finished, unfinished []string
	for i := 0; i < 30; i++ {
		id := launch(t, s, "a", "x")
		e.obs.wait(id, work.EventCompleted)
		finished = append(finished, id)
		unfinished = append(unfinished, launch(t, s, "b", "x"))
	}
	out := act(t, s, map[string]string{"action": "list"})
	var got []struct {
		Work struct {
			ID string `json:"id"`
		} `json:"work"`
	}
	if err := jsonUnmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 {
		t.Fatalf("list has %d entries, want 50", len(got))
	}
	var want []string
	for i := len(unfinished) - 1; i >= 0; i-- {
		want = append(want, unfinished[i])
	}
	for i := len(finished) - 1; len(want) < 50; i-- {
		want = append(want, finished[i])
	}
	for i := range want {
		if got[i].Work.ID != want[i] {
			t.Fatalf("entry %d is %s, want %s", i, got[i].Work.ID, want[i])
		}
	}
}
