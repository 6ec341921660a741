package work_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// TestStatusClass: Status.Class is the terminal class of failed and
// cancelled Work (a Class constant, ClassCancelled for cancelled Work) and
// empty for non-terminal and completed Work. It is the ErrorClass of the
// Work's terminal event: one value, recorded at settlement.
func TestStatusClass(t *testing.T) {
	o := work.NewOwner("coord")
	for _, tt := range []struct {
		name  string
		opts  []work.Option
		run   func(h *harness) work.Ref // returns a Work that settles (or not, for live states)
		state observe.State
		class string
	}{
		{name: "completed", state: work.StateCompleted, run: func(h *harness) work.Ref {
			ref, c := h.running(o, agent)
			c.complete("ok")
			return ref
		}},
		{name: "error", state: work.StateFailed, class: work.ClassError, run: func(h *harness) work.Ref {
			ref, c := h.running(o, agent)
			c.fail()
			return ref
		}},
		{name: "panic", state: work.StateFailed, class: work.ClassPanic, run: func(h *harness) work.Ref {
			ref, c := h.running(o, agent)
			c.panics()
			return ref
		}},
		{name: "result too large", opts: []work.Option{work.WithMaxResultBytes(4)}, state: work.StateFailed,
			class: work.ClassResultTooLarge, run: func(h *harness) work.Ref {
				ref, c := h.running(o, agent)
				c.complete("too long")
				return ref
			}},
		{name: "deadline", opts: []work.Option{work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute})}, state: work.StateFailed,
			class: work.ClassDeadline, run: func(h *harness) work.Ref {
				ref, c := h.running(o, agent)
				h.clk.BlockUntil(1)
				h.clk.Advance(time.Minute)
				c.returnCtxErr()
				return ref
			}},
		{name: "budget exhausted", state: work.StateFailed, class: work.ClassBudgetExhausted, run: func(h *harness) work.Ref {
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: o, Target: agent, Budget: work.Budget{MaxTurns: 1},
				FailOnBudget: true, Run: func(ctx context.Context) (string, error) {
					ex, _ := work.ExecutionFrom(ctx)
					for {
						if _, err := boundary.BeginRequest(ex); err != nil {
							return "", err
						}
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			return ref
		}},
		{name: "cancelled running", state: work.StateCancelled, class: work.ClassCancelled, run: func(h *harness) work.Ref {
			ref, c := h.running(o, agent)
			if _, err := h.s.Cancel(t.Context(), o, ref.ID); err != nil {
				t.Fatal(err)
			}
			c.returnCtxErr()
			return ref
		}},
		{name: "cancelled queued", opts: []work.Option{work.WithMaxRunning(1)}, state: work.StateCancelled,
			class: work.ClassCancelled, run: func(h *harness) work.Ref {
				h.running(o, fn)
				ref := h.start(o, agent, h.child())
				if _, err := h.s.Cancel(t.Context(), o, ref.ID); err != nil {
					t.Fatal(err)
				}
				return ref
			}},
		{name: "unrelated failure after cancel", state: work.StateFailed, class: work.ClassError, run: func(h *harness) work.Ref {
			ref, c := h.running(o, agent)
			if _, err := h.s.Cancel(t.Context(), o, ref.ID); err != nil {
				t.Fatal(err)
			}
			c.fail()
			return ref
		}},
		{name: "running", state: work.StateRunning, run: func(h *harness) work.Ref {
			ref, _ := h.running(o, agent)
			return ref
		}},
		{name: "queued", opts: []work.Option{work.WithMaxRunning(1)}, state: work.StateQueued, run: func(h *harness) work.Ref {
			h.running(o, fn)
			return h.start(o, agent, h.child())
		}},
		{name: "cancel-requested", state: work.StateCancelRequested, run: func(h *harness) work.Ref {
			ref, _ := h.running(o, agent)
			if _, err := h.s.Cancel(t.Context(), o, ref.ID); err != nil {
				t.Fatal(err)
			}
			return ref
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts...)
			ref := tt.run(h)
			if tt.state.Terminal() {
				ev := h.obs.waitTerminal(ref.ID)
				if ev.ErrorClass != tt.class {
					t.Fatalf("terminal event class %q, want %q", ev.ErrorClass, tt.class)
				}
			}
			st := h.status(o, ref.ID)
			if st.State != tt.state || st.Class != tt.class {
				t.Fatalf("status %s class %q, want %s class %q", st.State, st.Class, tt.state, tt.class)
			}
			// Settled and List carry the same class.
			l, _ := h.s.List(t.Context(), o)
			for _, s := range l {
				if s.Work.ID == ref.ID && s.Class != tt.class {
					t.Fatalf("List class %q", s.Class)
				}
			}
		})
	}
}

// TestStatusJSONHasNoClass: the model-facing JSON of a failed Work's
// Status has exactly the WorkStatus keys: no class or failure field, and
// nothing of the class's value.
func TestStatusJSONHasNoClass(t *testing.T) {
	h := newHarness(t, work.WithMaxResultBytes(4))
	o := work.NewOwner("coord")
	ref, c := h.running(o, agent)
	c.complete("too long")
	h.obs.waitTerminal(ref.ID)
	st := h.status(o, ref.ID)
	if st.Class != work.ClassResultTooLarge {
		t.Fatalf("class %q", st.Class)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"attachment", "attempt", "createdAt", "finishedAt", "resultAvailable", "startedAt", "state", "targetLabel", "work"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("JSON keys %v, want %v", keys, want)
	}
	if strings.Contains(string(b), work.ClassResultTooLarge) {
		t.Fatalf("JSON carries the class: %s", b)
	}
}
