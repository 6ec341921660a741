package driver

import (
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func admission(id string) Admission {
	return Admission{Record: Record{ID: id, Label: "l", TargetID: "l", Created: t0}, MaxOutstanding: 2, MaxStarts: 4, Retain: 2,
		Want: [3]int64{}, Eff: [3]int64{50, 100, 0}}
}

func TestRegistryAdmission(t *testing.T) {
	var g Registry
	a := admission("w1")
	a.Launch, a.Digest, a.Approval = Digest("call-1"), "d1", true
	if d := g.Decide(a); d.Replay != nil || d.Refusal != nil {
		t.Fatalf("first start: %+v", d)
	}
	run, rec := g.Admit(a)
	if rec.Seq != 1 || rec.State != work.StateQueued || !rec.Approval || !rec.Requested.Equal(t0) || run != [3]int64{50, 100, 0} || g.Starts != 1 {
		t.Fatalf("admitted: %+v run %v", rec, run)
	}
	// The same Work again (a call tried again after its answer was lost):
	// nothing admitted, the first's record and budget, whatever the
	// limits.
	if d := g.Decide(a); d.Again == nil || d.Again.Seq != 1 || d.Again.Run != run || d.Replay != nil || d.Refusal != nil {
		t.Fatalf("again: %+v", d)
	}
	// The same launch: a replay of w1, whatever the limits; another input
	// or target: a conflict.
	again := admission("w9")
	again.Launch, again.Digest = a.Launch, "d1"
	if d := g.Decide(again); d.Replay == nil || d.Replay.ID != "w1" {
		t.Fatalf("replay: %+v", d)
	}
	again.Digest = "other"
	if d := g.Decide(again); d.Refusal == nil || !errors.Is(d.Refusal, work.ErrConflict) {
		t.Fatalf("conflict: %+v", d)
	}
	g.Admit(admission("w2"))
	if d := g.Decide(admission("w3")); d.Limit != observe.LimitOutstanding || !errors.Is(d.Refusal, work.ErrLimit) {
		t.Fatalf("outstanding: %+v", d)
	}
	g.Transition(Record{ID: "w1", Rev: 1, State: work.StateCompleted, Finished: t0.Add(time.Second)})
	g.Transition(Record{ID: "w2", Rev: 1, State: work.StateCompleted, Finished: t0.Add(2 * time.Second)})
	g.Admit(admission("w3"))
	g.Admit(admission("w4"))
	if d := g.Decide(admission("w5")); d.Limit != observe.LimitOutstanding {
		t.Fatalf("outstanding again: %+v", d)
	}
	g.Transition(Record{ID: "w3", Rev: 1, State: work.StateFailed, Finished: t0.Add(3 * time.Second)})
	if d := g.Decide(admission("w5")); d.Limit != observe.LimitStarts {
		t.Fatalf("starts: %+v", d)
	}
	// A pool that cannot cover the child's budget refuses it.
	var p Registry
	p.SetPool([3]int64{1, -5, 0})
	if p.Pool.Limit != [3]int64{1, 0, 0} {
		t.Fatalf("pool limit %v", p.Pool.Limit)
	}
	b := admission("b")
	b.Want, b.Eff = [3]int64{2}, [3]int64{2, 100, 0}
	if d := p.Decide(b); d.Budget != observe.BudgetTurns || !errors.Is(d.Refusal, work.ErrBudgetExhausted) {
		t.Fatalf("pool: %+v", d)
	}
}

func TestRegistryTransitionsAndRetention(t *testing.T) {
	var g Registry
	g.SetPool([3]int64{10, 0, 0})
	for _, id := range []string{"a", "b", "c", "d"} {
		a := admission(id)
		a.MaxOutstanding, a.MaxStarts = 0, 0
		a.Want, a.Eff = [3]int64{2}, [3]int64{2, 100, 0}
		g.Admit(a)
	}
	if g.Pool.Held[0] != 8 {
		t.Fatalf("held %v", g.Pool.Held)
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	if ok, d := g.Transition(Record{ID: "a", Rev: 2, State: work.StateCompleted, Finished: at(1), Spent: &observe.Usage{Turns: 1}}); !ok || d != nil {
		t.Fatalf("applied %v, evicted %v", ok, d)
	}
	if g.Pool.Held[0] != 6 || g.Pool.Used[0] != 1 {
		t.Fatalf("settled: held %v used %v", g.Pool.Held, g.Pool.Used)
	}
	// A late record, and a later terminal one, settle nothing again.
	if ok, _ := g.Transition(Record{ID: "a", Rev: 1, State: work.StateRunning}); ok {
		t.Fatal("a late record applied")
	}
	g.Transition(Record{ID: "a", Rev: 3, State: work.StateCompleted, Finished: at(1), Spent: &observe.Usage{Turns: 1}})
	if g.Pool.Used[0] != 1 || g.Records[g.Find("a")].State != work.StateCompleted {
		t.Fatalf("repeat: used %v, %+v", g.Pool.Used, g.Records[g.Find("a")])
	}
	if !g.MarkRead("a") || g.MarkRead("a") || g.MarkRead("nope") {
		t.Fatal("MarkRead reports a change once")
	}
	g.Transition(Record{ID: "b", Rev: 1, State: work.StateCompleted, Finished: at(2)})
	// Retain 2: the third terminal Work evicts the read one first.
	if _, d := g.Transition(Record{ID: "c", Rev: 1, State: work.StateFailed, Finished: at(3)}); len(d) != 1 || d[0] != "a" {
		t.Fatalf("evicted %v, want the read result", d)
	}
	// A detached live Work goes when it ends.
	if found, dropped := g.Detach("d"); !found || dropped {
		t.Fatalf("detach live: %v %v", found, dropped)
	}
	if len(g.Visible()) != 2 {
		t.Fatalf("visible %d", len(g.Visible()))
	}
	if ok, d := g.Transition(Record{ID: "d", Rev: 1, State: work.StateCancelled, Finished: at(4)}); !ok || d != nil || g.Find("d") >= 0 {
		t.Fatalf("detached ended: applied %v, evicted %v, still kept %v", ok, d, g.Find("d") >= 0)
	}
	if found, dropped := g.Detach("b"); !found || !dropped || g.Find("b") >= 0 {
		t.Fatal("detach terminal drops it")
	}
	// Age: records settled longer ago than RetainAge go.
	g.RetainAge = time.Minute
	if d := g.Expire(at(30)); d != nil {
		t.Fatalf("expired early: %v", d)
	}
	if d := g.Expire(at(200)); len(d) != 1 || d[0] != "c" {
		t.Fatalf("expired %v", d)
	}
	// Forget: a start that failed after admission; its identity is free.
	a := admission("e")
	a.Launch, a.Digest = "k", "d"
	a.Want, a.Eff = [3]int64{2}, [3]int64{2, 100, 0}
	g.Admit(a)
	held := g.Pool.Held[0]
	g.Forget("e")
	if g.Find("e") >= 0 || len(g.Launches) != 0 || g.Pool.Held[0] != held-2 {
		t.Fatalf("forget: %+v held %v", g, g.Pool.Held)
	}
}
