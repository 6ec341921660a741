package work_test

import (
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestMisuseEngine: an Engine made by neither New nor a runner, zero or
// nil, answers every method that returns an error with ErrNotInitialized
// (enginetest.ZeroEngine, and Shutdown) and the others with zero values;
// never a panic or a hang.
func TestMisuseEngine(t *testing.T) {
	for name, s := range map[string]*work.Engine{"zero": new(work.Engine), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			enginetest.ZeroEngine(t, s)
			var err error
			enginetest.NoHang(t, "Shutdown", func() { _, err = s.Shutdown(t.Context()) })
			if !errors.Is(err, work.ErrNotInitialized) {
				t.Errorf("Shutdown = %v, want ErrNotInitialized", err)
			}
			enginetest.NoHang(t, "values", func() {
				if !boundary.Now(s).IsZero() {
					t.Error("Now() is not the zero time")
				}
				_ = s.EffectiveBudget(work.Spec{})
			})
		})
	}
}

// TestMisuseEngineClosed: after Close, every method that would start
// Work answers ErrClosed and a second Close returns nil
// (enginetest.ClosedEngine), queries still answer, and Shutdown returns
// without error.
func TestMisuseEngineClosed(t *testing.T) {
	s := work.New()
	enginetest.ClosedEngine(t, s)
	ctx := t.Context()
	o := work.NewOwner("coord")
	enginetest.NoHang(t, "closed", func() {
		if _, err := s.List(ctx, o); err != nil {
			t.Errorf("List = %v", err)
		}
		if _, err := s.Status(ctx, o, "x"); !errors.Is(err, work.ErrNotFound) {
			t.Errorf("Status = %v, want ErrNotFound", err)
		}
		if _, err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown after Close = %v", err)
		}
	})
}

// TestMisuseNilArguments: nil options, nil funcs and nil pointers given to
// the package's functions are ignored or refused with a stable error.
func TestMisuseNilArguments(t *testing.T) {
	ctx := t.Context()
	o := work.NewOwner("coord")
	for _, tt := range []struct {
		name string
		f    func() error
		want error // nil: no error expected
	}{
		{"New(nil option)", func() error {
			s := work.New(nil, work.WithClock(nil), work.WithObserver(nil))
			defer s.Close(ctx)
			_, err := s.List(ctx, o)
			return err
		}, nil},
		{"ResolveLimits(nil option)", func() error { _, err := work.ResolveLimits(nil); return err }, nil},
		{"Start with a nil Run", func() error {
			s := work.New()
			defer s.Close(ctx)
			_, err := s.Start(ctx, work.Spec{Owner: o, Target: fn})
			return err
		}, work.ErrInvalidSpec},
		{"Call with a nil Run", func() error {
			s := work.New()
			defer s.Close(ctx)
			_, err := s.Call(ctx, work.Spec{Owner: o, Target: fn})
			return err
		}, work.ErrInvalidSpec},
		{"Start with a zero Job", func() error {
			s := work.New()
			defer s.Close(ctx)
			_, err := s.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "j", Kind: work.KindFunction}, Job: &work.Job{}})
			return err
		}, work.ErrInvalidSpec},
		{"nil Job.Validate", func() error { var j *work.Job; return j.Validate() }, work.ErrInvalidSpec},
		{"zero Job.Validate", func() error { return new(work.Job).Validate() }, work.ErrInvalidSpec},
		{"NewSubscription(nil onClose)", func() error {
			sub, publish, closeFn := work.NewSubscription(0, nil)
			publish(work.Notice{})
			closeFn()
			sub.Close()
			publish(work.Notice{})
			return nil
		}, nil},
		{"ReportUpdate outside a child", func() error {
			_, err := work.ReportUpdate(ctx, "k", nil, false)
			return err
		}, work.ErrUpdateRefused},
		{"AwaitAnswer outside a child", func() error { _, err := work.AwaitAnswer(ctx); return err }, nil},
		{"ReportProgress outside a child", func() error { work.ReportProgress(ctx, 1, 2); return nil }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, tt.name, func() { err = tt.f() })
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("%s = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// TestMisuseExecution: outside a child run (a context with no Execution,
// the nil and zero Execution) updates are refused as not declared, there
// is no answer to wait for and nothing is unanswered.
func TestMisuseExecution(t *testing.T) {
	enginetest.NoHang(t, "outside a child", func() {
		if _, err := work.ReportUpdate(t.Context(), "k", []byte(`1`), true); !errors.Is(err, work.ErrUpdateRefused) {
			t.Errorf("ReportUpdate = %v, want ErrUpdateRefused", err)
		}
		if g, err := work.AwaitAnswer(t.Context()); g != nil || err != nil {
			t.Errorf("AwaitAnswer = %v %v", g, err)
		}
	})
	for name, ex := range map[string]*work.Execution{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				if u := boundary.Unanswered(ex); u != nil {
					t.Errorf("Unanswered = %v", u)
				}
			})
		})
	}
}

// TestMisuseErrorValues: the Error constructors' results and a nil *Error
// answer errors.Is for their sentinel; Wrap of a nil cause keeps the code.
func TestMisuseErrorValues(t *testing.T) {
	var nilErr *work.Error
	enginetest.NoHang(t, "Error", func() {
		_ = nilErr.Wrap(nil)
		_ = nilErr.Unwrap()
		if e := work.ErrLimit.Detail("x").Wrap(nil); !errors.Is(e, work.ErrLimit) {
			t.Errorf("ErrLimit.Detail(x).Wrap(nil) = %v, want ErrLimit", e)
		}
		if _, ok := work.DecodeError("", ""); ok {
			t.Error("DecodeError of an empty code decoded")
		}
	})
}
