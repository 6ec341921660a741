package work_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The randomized state-machine test drives an engine with random
// operations from many owners while a model predicts, op by op, every
// answer, every count and every event. Children block on their own control
// channels, so the test alone decides when each one ends and how.
//
// Set WORK_SEED to replay a run; the seed is always logged.

const (
	smMaxRunning     = 4
	smMaxOutstanding = 6
	smMaxStarts      = 25
	smRetain         = 3
	smMaxBytes       = 8
)

type mWork struct {
	id        string
	owner     *mOwner
	kind      observe.Kind
	c         *child
	state     observe.State
	detached  bool
	visible   bool
	output    string
	read      bool
	guidance  int // queued, undelivered
	cursor    int
	commands  map[string]string // command id -> text
	receipts  map[string]work.SendReceipt
	events    []string // predicted event types, in order
	forgotten bool
}

type mOwner struct {
	name     string
	queue    []*mWork
	inRing   bool
	active   int
	starts   int
	terminal []*mWork // visible terminal, oldest finished first
	visible  map[string]*mWork
}

type model struct {
	owners  map[string]*mOwner
	ring    []*mOwner
	running int
	works   []*mWork
	byID    map[string]*mWork
	refused int
}

func (m *model) owner(name string) *mOwner {
	o := m.owners[name]
	if o == nil {
		o = &mOwner{name: name, visible: map[string]*mWork{}}
		m.owners[name] = o
	}
	return o
}

func (w *mWork) emit(ev string) { w.events = append(w.events, ev) }

func (m *model) dispatch() {
	for m.running < smMaxRunning && len(m.ring) > 0 {
		o := m.ring[0]
		m.ring = m.ring[1:]
		w := o.queue[0]
		o.queue = o.queue[1:]
		o.inRing = false
		if len(o.queue) > 0 {
			m.ring = append(m.ring, o)
			o.inRing = true
		}
		w.state = work.StateRunning
		w.emit("running")
		m.running++
	}
}

// drop does what the engine's transition does before a terminal event:
// undelivered guidance is dropped first.
func (w *mWork) drop() {
	if w.guidance > 0 {
		w.guidance = 0
		w.emit("guidance-dropped")
	}
}

// finish does what the engine's finishLocked does.
func (m *model) finish(w *mWork) {
	w.owner.active--
	if w.detached {
		w.forgotten = true
		return
	}
	o := w.owner
	o.terminal = append(o.terminal, w)
	for len(o.terminal) > smRetain {
		// Read results first, then failed and cancelled, unread results
		// last; the oldest finished first within each.
		i := slices.IndexFunc(o.terminal, func(x *mWork) bool { return x.state == work.StateCompleted && x.read })
		if i < 0 {
			i = slices.IndexFunc(o.terminal, func(x *mWork) bool { return x.state != work.StateCompleted })
		}
		if i < 0 {
			i = 0
		}
		old := o.terminal[i]
		o.terminal = slices.Delete(o.terminal, i, i+1)
		delete(o.visible, old.id)
		old.visible = false
		old.forgotten = true
	}
}

// dropCommands: the engine forgets command records on detach and once
// Result has returned a terminal answer.
func (w *mWork) dropCommands() {
	w.commands = map[string]string{}
	w.receipts = map[string]work.SendReceipt{}
}

func (m *model) settle(w *mWork, to observe.State) {
	m.running--
	w.state = to
	w.drop()
	w.emit(string(to))
	m.finish(w)
	m.dispatch()
}

// cancel returns (accepted, state after).
func (m *model) cancel(w *mWork) (bool, observe.State) {
	switch w.state {
	case work.StateQueued:
		o := w.owner
		o.queue = slices.DeleteFunc(o.queue, func(x *mWork) bool { return x == w })
		if len(o.queue) == 0 && o.inRing {
			m.ring = slices.DeleteFunc(m.ring, func(x *mOwner) bool { return x == o })
			o.inRing = false
		}
		w.state = work.StateCancelled
		w.drop()
		w.emit("cancelled")
		m.finish(w)
		return true, w.state
	case work.StateRunning:
		w.state = work.StateCancelRequested
		w.emit("cancel-requested")
		return true, w.state
	case work.StateCancelRequested:
		return true, w.state
	}
	return false, w.state
}

func (m *model) detach(w *mWork) {
	o := w.owner
	delete(o.visible, w.id)
	w.visible = false
	w.detached = true
	w.dropCommands()
	w.emit("detached")
	if i := slices.Index(o.terminal, w); i >= 0 {
		o.terminal = slices.Delete(o.terminal, i, i+1)
		w.forgotten = true
	}
}

func (m *model) census() map[observe.State]int {
	c := map[observe.State]int{}
	for _, w := range m.works {
		if !w.forgotten {
			c[w.state]++
		}
	}
	return c
}

func TestStateMachineRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("WORK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with WORK_SEED=%d)", seed, seed)
	ops := 5000
	if testing.Short() {
		ops = 600
	}
	runStateMachine(t, seed, ops)
}

func runStateMachine(t *testing.T, seed uint64, ops int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h := newHarness(t, work.WithMaxRunning(smMaxRunning), work.WithMaxOutstanding(smMaxOutstanding),
		work.WithMaxStarts(smMaxStarts), work.WithRetention(smRetain, 0), work.WithMaxResultBytes(smMaxBytes),
		work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	m := &model{owners: map[string]*mOwner{}, byID: map[string]*mWork{}}
	ownerNames := make([]string, 10)
	for i := range ownerNames {
		ownerNames[i] = fmt.Sprintf("owner-%d", i)
	}
	pickOwner := func() string { return ownerNames[r.IntN(len(ownerNames))] }
	// pick returns a random Work matching pred, or nil.
	pick := func(pred func(w *mWork) bool) *mWork {
		var c []*mWork
		for _, w := range m.works {
			if pred(w) {
				c = append(c, w)
			}
		}
		if len(c) == 0 {
			return nil
		}
		return c[r.IntN(len(c))]
	}
	// target returns an id for an owner action: usually one of its visible
	// Works, sometimes another owner's, a detached or forgotten one, or an
	// unknown id. It returns the model Work when the owner can see it.
	target := func(owner string) (string, *mWork) {
		switch n := r.IntN(10); {
		case n < 7:
			if o := m.owners[owner]; o != nil && len(o.visible) > 0 {
				ids := make([]string, 0, len(o.visible))
				for id := range o.visible {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				id := ids[r.IntN(len(ids))]
				return id, o.visible[id]
			}
		case n < 9:
			if w := pick(func(w *mWork) bool { return !w.visible || w.owner.name != owner }); w != nil {
				return w.id, nil
			}
		}
		return fmt.Sprintf("%032x", r.Uint64()), nil
	}
	end := func(w *mWork, how string) {
		switch how {
		case "complete":
			out := "ok"
			if r.IntN(6) == 0 {
				out = strings.Repeat("x", smMaxBytes+1)
			}
			w.c.complete(out)
			h.obs.waitTerminal(w.id)
			if len(out) > smMaxBytes {
				m.settle(w, work.StateFailed)
			} else {
				w.output = out
				m.settle(w, work.StateCompleted)
			}
		case "fail":
			w.c.fail()
			h.obs.waitTerminal(w.id)
			m.settle(w, work.StateFailed)
		case "panic":
			w.c.panics()
			h.obs.waitTerminal(w.id)
			m.settle(w, work.StateFailed)
		case "ctxerr": // only for cancel-requested Work
			w.c.returnCtxErr()
			h.obs.waitTerminal(w.id)
			m.settle(w, work.StateCancelled)
		}
	}
	counts := map[string]int{}
	for step := 0; step < ops; step++ {
		op := r.IntN(100)
		owner := pickOwner()
		o := work.NewOwner(owner)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (seed %d): %s", step, seed, fmt.Sprintf(format, args...))
		}
		switch {
		case op < 25: // start
			counts["start"]++
			mo := m.owner(owner)
			kind := work.KindAgent
			if r.IntN(3) == 0 {
				kind = work.KindFunction
			}
			c := h.child()
			ref, err := h.s.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: kind.String(), Kind: kind}, Run: c.run})
			var reason string
			switch {
			case mo.active >= smMaxOutstanding:
				reason = observe.LimitOutstanding
			case mo.starts >= smMaxStarts:
				reason = observe.LimitStarts
			}
			if reason != "" {
				if !errors.Is(err, work.ErrLimit) || !strings.Contains(err.Error(), reason) {
					fail("start: err = %v, want %s limit", err, reason)
				}
				m.refused++
				break
			}
			if err != nil {
				fail("start: %v", err)
			}
			w := &mWork{id: ref.ID, owner: mo, kind: kind, c: c, state: work.StateQueued, visible: true,
				commands: map[string]string{}, receipts: map[string]work.SendReceipt{}}
			w.emit("queued")
			m.works = append(m.works, w)
			m.byID[w.id] = w
			mo.visible[w.id] = w
			mo.active++
			mo.starts++
			mo.queue = append(mo.queue, w)
			if !mo.inRing {
				m.ring = append(m.ring, mo)
				mo.inRing = true
			}
			m.dispatch()
		case op < 45: // a running child ends (visible or detached)
			w := pick(func(w *mWork) bool { return w.state == work.StateRunning || w.state == work.StateCancelRequested })
			if w == nil {
				break
			}
			hows := []string{"complete", "complete", "fail", "panic"}
			if w.state == work.StateCancelRequested {
				hows = append(hows, "ctxerr", "ctxerr", "ctxerr")
			}
			how := hows[r.IntN(len(hows))]
			counts["end:"+how]++
			end(w, how)
		case op < 55: // cancel
			counts["cancel"]++
			id, w := target(owner)
			rc, err := h.s.Cancel(t.Context(), o, id)
			if w == nil {
				if !errors.Is(err, work.ErrNotFound) {
					fail("cancel of invisible: %v", err)
				}
				break
			}
			acc, st := m.cancel(w)
			if err != nil || rc.Accepted != acc || rc.State != st || rc.WorkID != id {
				fail("cancel = %+v %v, want accepted=%v state=%s", rc, err, acc, st)
			}
			if st == work.StateCancelled && acc {
				m.dispatch() // no-op: cancelling queued Work frees no running slot
			}
		case op < 67: // send
			counts["send"]++
			id, w := target(owner)
			cmd := fmt.Sprintf("call-%d", r.IntN(4))
			text := fmt.Sprintf("guidance %d", r.IntN(2))
			rc, err := h.s.Send(t.Context(), o, id, cmd, text)
			switch {
			case w == nil:
				if !errors.Is(err, work.ErrNotFound) {
					fail("send to invisible: %v", err)
				}
			case w.kind != work.KindAgent:
				if !errors.Is(err, work.ErrNotAgent) {
					fail("send to function: %v", err)
				}
			case w.commands[cmd] != "" && w.commands[cmd] != text:
				if !errors.Is(err, work.ErrConflict) {
					fail("send conflict: %v", err)
				}
			case w.commands[cmd] == text:
				if err != nil || rc != w.receipts[cmd] {
					fail("send replay = %+v %v, want %+v", rc, err, w.receipts[cmd])
				}
			case w.state.Terminal():
				if !errors.Is(err, work.ErrTerminal) {
					fail("send to terminal: %v", err)
				}
			default:
				w.cursor++
				if err != nil || rc.Cursor != strconv.Itoa(w.cursor) {
					fail("send = %+v %v, want cursor %d", rc, err, w.cursor)
				}
				w.commands[cmd], w.receipts[cmd] = text, rc
				w.guidance++
				w.emit("guidance-accepted")
			}
		case op < 72: // a running agent child drains its mailbox
			counts["drain"]++
			w := pick(func(w *mWork) bool {
				return (w.state == work.StateRunning || w.state == work.StateCancelRequested) && w.kind == work.KindAgent
			})
			if w == nil {
				break
			}
			<-w.c.started
			got := boundary.Guidance(w.c.ex)
			if len(got) != w.guidance {
				fail("drained %d messages, model has %d", len(got), w.guidance)
			}
			if w.guidance > 0 {
				w.emit("guidance-delivered")
				w.guidance = 0
			}
		case op < 80: // detach
			counts["detach"]++
			id, w := target(owner)
			rc, err := h.s.Detach(t.Context(), o, id)
			if w == nil {
				if !errors.Is(err, work.ErrNotFound) {
					fail("detach of invisible: %v", err)
				}
				break
			}
			if err != nil || rc.ID != id {
				fail("detach = %+v %v", rc, err)
			}
			m.detach(w)
		case op < 92: // result (timeout 0) or status
			counts["result"]++
			id, w := target(owner)
			if r.IntN(2) == 0 {
				st, out, err := h.s.Result(context.Background(), o, id, 0)
				if w == nil {
					if !errors.Is(err, work.ErrNotFound) {
						fail("result of invisible: %v", err)
					}
					break
				}
				if err != nil || st.State != w.state || out != w.output || st.ResultAvailable != (w.state == work.StateCompleted) {
					fail("result = %+v %q %v, model %s %q", st, out, err, w.state, w.output)
				}
				if w.state == work.StateCompleted && !w.read {
					w.read = true
					w.emit("result-read")
				}
				if w.state.Terminal() {
					w.dropCommands()
				}
			} else {
				st, err := h.s.Status(t.Context(), o, id)
				if w == nil {
					if !errors.Is(err, work.ErrNotFound) {
						fail("status of invisible: %v", err)
					}
					break
				}
				if err != nil || st.State != w.state {
					fail("status = %+v %v, model %s", st, err, w.state)
				}
			}
		case op < 95: // release
			counts["release"]++
			h.s.Release(t.Context(), o)
			if mo := m.owners[owner]; mo != nil {
				ids := make([]string, 0, len(mo.visible))
				for id := range mo.visible {
					ids = append(ids, id)
				}
				for _, id := range ids {
					w := mo.visible[id]
					m.detach(w)
					m.cancel(w)
				}
				// Detached Work of the owner is cancelled too.
				for _, w := range m.works {
					if w.owner == mo && w.detached && !w.state.Terminal() && !slices.Contains(ids, w.id) {
						m.cancel(w)
					}
				}
				delete(m.owners, owner)
			}
		default: // clock moves
			h.clk.Advance(time.Duration(r.IntN(5000)) * time.Millisecond)
		}
		checkModel(t, h, m, ownerNames, step, seed)
	}
	t.Logf("ops: %v; works %d, refused %d", counts, len(m.works), m.refused)

	// Checkpoint: every accepted Work is terminal exactly once, or still
	// visibly unfinished (to its owner when visible, in the census always).
	verifyEvents(t, h, m, false)

	// Drain: end everything that is still running until nothing is left.
	for {
		w := pick(func(w *mWork) bool { return w.state == work.StateRunning || w.state == work.StateCancelRequested })
		if w == nil {
			break
		}
		end(w, "complete")
	}
	checkModel(t, h, m, ownerNames, ops, seed)
	for _, w := range m.works {
		if !w.state.Terminal() {
			t.Fatalf("work %s still %s after the drain", w.id, w.state)
		}
	}
	verifyEvents(t, h, m, true)
}

func checkModel(t *testing.T, h *harness, m *model, owners []string, step int, seed uint64) {
	t.Helper()
	got, want := census(h.s), m.census()
	for _, st := range observe.States {
		if got[st] != want[st] {
			t.Fatalf("step %d (seed %d): census %v, model %v", step, seed, got, want)
		}
	}
	// Conservation: the census sums to the live registry items.
	live := 0
	for _, w := range m.works {
		if w.visible || (w.detached && !w.state.Terminal()) {
			live++
		}
	}
	if censusTotal(h.s) != live {
		t.Fatalf("step %d (seed %d): census total %d, live items %d", step, seed, censusTotal(h.s), live)
	}
	if step%25 != 0 {
		return
	}
	for _, name := range owners {
		l, err := h.s.List(t.Context(), work.NewOwner(name))
		if err != nil {
			t.Fatal(err)
		}
		mo := m.owners[name]
		n := 0
		if mo != nil {
			n = len(mo.visible)
		}
		if len(l) != n {
			t.Fatalf("step %d (seed %d): %s lists %d, model %d", step, seed, name, len(l), n)
		}
		for _, st := range l {
			if w := mo.visible[st.Work.ID]; w == nil || w.state != st.State {
				t.Fatalf("step %d (seed %d): %s lists %s %s", step, seed, name, st.Work.ID, st.State)
			}
		}
		rows, more, _ := boundary.Rows(t.Context(), h.s, work.NewOwner(name))
		if len(rows)+more != n {
			t.Fatalf("step %d: rows %d + more %d != %d", step, len(rows), more, n)
		}
	}
}

// verifyEvents checks the recorder against the model: only legal
// transitions, in order, terminal final, exactly one terminal per finished
// Work, and exactly the event sequence the model predicted.
func verifyEvents(t *testing.T, h *harness, m *model, final bool) {
	t.Helper()
	byWork := map[string][]observe.Event{}
	refused := 0
	// Events are delivered after the engine's lock is released: the last
	// batch may still be on its way. Wait for the model's count (or time
	// out and let the comparison below report the difference).
	for _, w := range m.works {
		h.obs.waitCount(w.id, len(w.events), 10*time.Second)
	}
	for _, e := range h.obs.rec.Events() {
		if e.Type == observe.EventRefused {
			refused++
			continue
		}
		if e.WorkID == "" {
			t.Fatalf("event without a work id: %+v", e)
		}
		byWork[e.WorkID] = append(byWork[e.WorkID], e)
	}
	if refused != m.refused {
		t.Fatalf("%d refusals recorded, model %d", refused, m.refused)
	}
	if len(byWork) != len(m.works) {
		t.Fatalf("events for %d works, model accepted %d", len(byWork), len(m.works))
	}
	for _, w := range m.works {
		evs := byWork[w.id]
		var prev observe.State
		terminals := 0
		var types []string
		for i, e := range evs {
			types = append(types, string(e.Type))
			if e.To == "" {
				if e.From != "" {
					t.Fatalf("%s: non-transition with From %q", w.id, e.From)
				}
				continue
			}
			if string(e.Type) != string(e.To) {
				t.Fatalf("%s: event %s with To %s", w.id, e.Type, e.To)
			}
			if i == 0 {
				if e.From != "" || e.To != work.StateQueued {
					t.Fatalf("%s: first event %+v", w.id, e)
				}
			} else {
				if prev.Terminal() {
					t.Fatalf("%s: transition %s>%s after terminal", w.id, e.From, e.To)
				}
				if e.From != prev || !work.CanTransition(e.From, e.To) {
					t.Fatalf("%s: illegal or out-of-order transition %s>%s after %s", w.id, e.From, e.To, prev)
				}
			}
			prev = e.To
			if e.To.Terminal() {
				terminals++
			}
		}
		if terminals > 1 || (terminals == 1) != w.state.Terminal() {
			t.Fatalf("%s: %d terminal events, model state %s", w.id, terminals, w.state)
		}
		if !w.state.Terminal() {
			// Visibly unfinished: its owner sees it unfinished, or the
			// census counts it (detached).
			if w.visible {
				st, err := h.s.Status(t.Context(), work.NewOwner(w.owner.name), w.id)
				if err != nil || st.State != w.state {
					t.Fatalf("%s: unfinished but status %+v %v", w.id, st, err)
				}
			} else if census(h.s)[w.state] == 0 {
				t.Fatalf("%s: detached and unfinished but not counted", w.id)
			}
		}
		if strings.Join(types, " ") != strings.Join(w.events, " ") {
			t.Fatalf("%s: recorded %v\nmodel    %v", w.id, types, w.events)
		}
	}
	_ = final
}

func TestStateMachineFixedSeeds(t *testing.T) {
	for _, seed := range []uint64{1, 2, 42} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runStateMachine(t, seed, 800) })
	}
}
