package work_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestZeroEngine: every exported method of an Engine made by neither New
// nor a runner either returns ErrNotInitialized (TestMisuseEngine; a message
// naming work.New) or, when it returns no error, a safe zero value. None
// panics or hangs.
func TestZeroEngine(t *testing.T) {
	o := work.NewOwner("coord")
	spec := work.Spec{Owner: o, Target: fn, Run: immediate("x")}
	if msg := work.ErrNotInitialized.Error(); !strings.Contains(msg, "work.New") {
		t.Fatalf("message %q does not name work.New", msg)
	}

	valueCases := []struct {
		name  string
		check func(s *work.Engine) error
	}{
		{"Rows", func(s *work.Engine) error {
			if rows, more, _ := boundary.Rows(t.Context(), s, o); rows != nil || more != 0 {
				return fmt.Errorf("Rows() = %v %d", rows, more)
			}
			return nil
		}},
		{"Live", func(s *work.Engine) error {
			if live, _ := boundary.Live(t.Context(), s, o); live {
				return errors.New("Live() = true")
			}
			return nil
		}},
		{"Now", func(s *work.Engine) error {
			if now := boundary.Now(s); !now.IsZero() {
				return fmt.Errorf("Now() = %v, want the zero time", now)
			}
			return nil
		}},
		{"counts (test view)", func(s *work.Engine) error {
			n := 0
			s.CensusForTest(func(string, observe.State, int) { n++ })
			if n != 0 {
				return fmt.Errorf("Census called fn %d times", n)
			}
			return nil
		}},
		{"Snapshot", func(s *work.Engine) error {
			if snap, _ := s.Snapshot(context.Background()); !snap.Time.IsZero() || len(snap.Live) != 0 || snap.MaxRunning != 0 {
				return fmt.Errorf("Snapshot() = %+v", snap)
			}
			return nil
		}},
		{"pool state (test view)", func(s *work.Engine) error {
			if _, ok := s.PoolForTest(o); ok {
				return errors.New("Pool() reports a pool")
			}
			return nil
		}},
		{"pool sums (test view)", func(s *work.Engine) error {
			s.PoolCensusForTest(func(string, int64, int64) {})
			return nil
		}},
		{"EffectiveBudget", func(s *work.Engine) error { _ = s.EffectiveBudget(spec); return nil }},
	}
	for _, tt := range valueCases {
		t.Run("value/"+tt.name, func(t *testing.T) {
			var s work.Engine
			var err error
			enginetest.NoHang(t, tt.name, func() { err = tt.check(&s) })
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestZeroSubscription: a Subscription not made by Subscribe or
// NewSubscription (zero or nil) is an ended one: its channel is closed,
// Dropped is 0, and Close (repeated) does nothing.
func TestZeroSubscription(t *testing.T) {
	for _, tt := range []struct {
		name string
		sub  *work.Subscription
	}{
		{"zero", &work.Subscription{}},
		{"nil", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enginetest.NoHang(t, "Subscription", func() {
				tt.sub.Close()
				tt.sub.Close()
				if _, ok := <-tt.sub.C(); ok {
					t.Error("C() delivered a notice")
				}
				if n := tt.sub.Dropped(); n != 0 {
					t.Errorf("Dropped() = %d", n)
				}
			})
		})
	}
}

// TestZeroExecution: every method of a nil or zero *Execution (what
// ExecutionFrom returns outside a child, ignoring ok) behaves as outside a
// child run: no Work, no budget, nothing counted, no panic.
func TestZeroExecution(t *testing.T) {
	for _, tt := range []struct {
		name string
		ex   *work.Execution
	}{
		{"nil", nil},
		{"zero", &work.Execution{}},
		{"from a plain context", func() *work.Execution { ex, _ := work.ExecutionFrom(context.Background()); return ex }()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ex := tt.ex
			enginetest.NoHang(t, "Execution", func() {
				if id := ex.WorkID(); id != "" {
					t.Errorf("WorkID() = %q", id)
				}
				if sc := ex.Scope(); !sc.IsZero() {
					t.Errorf("Scope() = %v", sc)
				}
				if turn, err := boundary.BeginRequest(ex); turn != (boundary.Turn{}) || err != nil {
					t.Errorf("BeginRequest() = %+v %v", turn, err)
				}
				boundary.EndRequest(ex, 1, 2, true)
				boundary.EndRequest(ex, 0, 0, false)
				if n := boundary.ToolCallsLeft(ex); n != -1 {
					t.Errorf("ToolCallsLeft() = %d", n)
				}
				if !boundary.BeginToolCall(ex) {
					t.Error("BeginToolCall() = false")
				}
				if b := ex.BudgetForTest(); b != (work.Budget{}) {
					t.Errorf("Budget() = %+v", b)
				}
				if u := ex.Usage(); u != (observe.Usage{}) {
					t.Errorf("Usage() = %+v", u)
				}
				ex.ReportProgressForTest(1, 2)
				ex.CountModelRequestForTest()
				ex.CountToolCallForTest()
				if p := ex.Progress(); p != (observe.Progress{}) {
					t.Errorf("Progress() = %+v", p)
				}
				if g := boundary.Guidance(ex); g != nil {
					t.Errorf("Guidance() = %v", g)
				}
			})
		})
	}
}

// TestZeroValues: the other exported types' zero values (and a nil *Error)
// are usable: their methods return without panicking.
func TestZeroValues(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"Owner", func() { var o work.Owner; _, _, _ = o.ID(), o.Depth(), o.IsZero() }},
		{"Ref", func() { var r work.Ref; _, _ = r.MarshalJSON(); _ = work.RefKind(r) }},
		{"Status", func() { var s work.Status; _, _ = s.MarshalJSON() }},
		{"receipts", func() {
			_, _ = work.CancelReceipt{}.MarshalJSON()
			_, _ = work.SendReceipt{}.MarshalJSON()
			_, _ = work.DetachReceipt{}.MarshalJSON()
		}},
		{"State", func() { var s observe.State; _, _ = s.Terminal(), s.Valid() }},
		{"Kind", func() { var k observe.Kind; _ = k.String() }},
		{"Usage", func() { var u observe.Usage; _ = u.Tokens() }},
		{"ShutdownReport", func() { var r observe.ShutdownReport; _, _, _ = r.String(), r.OrphanCount(), r.LogValue() }},
		{"NopObserver", func() { var o observe.NopObserver; o.Event(context.Background(), observe.Event{}) }},
		{"Error", func() {
			var e work.Error
			_ = e.Error()
			_ = e.Is(work.ErrNotFound)
			_ = e.Detail("d")
		}},
		{"nil Error", func() {
			var e *work.Error
			_ = e.Error()
			_ = e.Is(work.ErrNotFound)
			_ = e.Detail("d")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { enginetest.NoHang(t, tt.name, tt.f) })
	}
}
