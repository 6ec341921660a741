package work_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
)

// supervisorCalls is every exported method of *Supervisor that returns an
// error, called with valid arguments.
func supervisorCalls(t *testing.T) []struct {
	name string
	call func(s *work.Supervisor) error
} {
	ctx := t.Context()
	o := work.NewOwner("coord")
	spec := work.Spec{Owner: o, Target: fn, Run: immediate("x")}
	return []struct {
		name string
		call func(s *work.Supervisor) error
	}{
		{"Start", func(s *work.Supervisor) error { _, err := s.Start(ctx, spec); return err }},
		{"Call", func(s *work.Supervisor) error { _, err := s.Call(ctx, spec); return err }},
		{"Status", func(s *work.Supervisor) error { _, err := s.Status(ctx, o, "x"); return err }},
		{"List", func(s *work.Supervisor) error { _, err := s.List(ctx, o); return err }},
		{"Rows", func(s *work.Supervisor) error { _, _, err := s.Rows(ctx, o); return err }},
		{"Result", func(s *work.Supervisor) error { _, _, err := s.Result(ctx, o, "x", time.Millisecond); return err }},
		{"Cancel", func(s *work.Supervisor) error { _, err := s.Cancel(ctx, o, "x"); return err }},
		{"Detach", func(s *work.Supervisor) error { _, err := s.Detach(ctx, o, "x"); return err }},
		{"Send", func(s *work.Supervisor) error { _, err := s.Send(ctx, o, "x", "c", "m"); return err }},
		{"Answer", func(s *work.Supervisor) error { _, err := s.Answer(ctx, o, "x", "c", "m"); return err }},
		{"Approve", func(s *work.Supervisor) error { return s.Approve(ctx, work.Approver(), "x") }},
		{"Deny", func(s *work.Supervisor) error { return s.Deny(ctx, work.Approver(), "x") }},
		{"Pending", func(s *work.Supervisor) error { _, err := s.Pending(ctx, o); return err }},
		{"Updates", func(s *work.Supervisor) error { _, err := s.Updates(ctx, o, "x", 0); return err }},
		{"SetPool", func(s *work.Supervisor) error { return s.SetPool(ctx, o, work.Budget{MaxTurns: 1}) }},
		{"Subscribe", func(s *work.Supervisor) error { _, err := s.Subscribe(ctx, o, 1); return err }},
		{"Settled", func(s *work.Supervisor) error { _, err := s.Settled(ctx, o); return err }},
		{"Live", func(s *work.Supervisor) error { _, err := s.Live(ctx, o); return err }},
		{"Release", func(s *work.Supervisor) error { return s.Release(ctx, o) }},
		{"Snapshot", func(s *work.Supervisor) error { _, err := s.Snapshot(ctx); return err }},
		{"Shutdown", func(s *work.Supervisor) error { _, err := s.Shutdown(ctx); return err }},
		{"Close", func(s *work.Supervisor) error { return s.Close(ctx) }},
	}
}

// TestMisuseSupervisor: a Supervisor not made by New, zero or nil, answers
// every method that returns an error with ErrNotInitialized and the others
// with zero values; never a panic or a hang.
func TestMisuseSupervisor(t *testing.T) {
	for name, mk := range map[string]func() *work.Supervisor{
		"zero": func() *work.Supervisor { return new(work.Supervisor) },
		"nil":  func() *work.Supervisor { return nil },
	} {
		for _, tt := range supervisorCalls(t) {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				var err error
				enginetest.NoHang(t, tt.name, func() { err = tt.call(mk()) })
				if !errors.Is(err, work.ErrNotInitialized) {
					t.Fatalf("%s = %v, want ErrNotInitialized", tt.name, err)
				}
			})
		}
		t.Run(name+"/values", func(t *testing.T) {
			s := mk()
			enginetest.NoHang(t, "values", func() {
				if s.Observer() == nil {
					t.Error("Observer() = nil")
				}
				if !s.Now().IsZero() {
					t.Error("Now() is not the zero time")
				}
				_ = s.EffectiveBudget(work.Spec{})
			})
		})
	}
}

// TestMisuseSupervisorClosed: after Close, every method that would start
// or change Work answers ErrClosed, queries still answer, and a second
// Close and Shutdown return without error.
func TestMisuseSupervisorClosed(t *testing.T) {
	s := work.New()
	ctx := t.Context()
	o := work.NewOwner("coord")
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	spec := work.Spec{Owner: o, Target: fn, Run: immediate("x")}
	enginetest.NoHang(t, "closed", func() {
		if _, err := s.Start(ctx, spec); !errors.Is(err, work.ErrClosed) {
			t.Errorf("Start = %v, want ErrClosed", err)
		}
		if _, err := s.Call(ctx, spec); !errors.Is(err, work.ErrClosed) {
			t.Errorf("Call = %v, want ErrClosed", err)
		}
		if _, err := s.List(ctx, o); err != nil {
			t.Errorf("List = %v", err)
		}
		if _, err := s.Status(ctx, o, "x"); !errors.Is(err, work.ErrNotFound) {
			t.Errorf("Status = %v, want ErrNotFound", err)
		}
		if err := s.Close(ctx); err != nil {
			t.Errorf("second Close = %v", err)
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

// TestMisuseExecution: the nil and zero Execution answer the calls of a
// child outside a run: updates refused as not declared, no answer to wait
// for, nothing unanswered.
func TestMisuseExecution(t *testing.T) {
	for name, ex := range map[string]*work.Execution{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				if _, err := ex.ReportUpdate("k", []byte(`1`), true); !errors.Is(err, work.ErrUpdateRefused) {
					t.Errorf("ReportUpdate = %v, want ErrUpdateRefused", err)
				}
				if g, err := ex.AwaitAnswer(t.Context()); g != nil || err != nil {
					t.Errorf("AwaitAnswer = %v %v", g, err)
				}
				if u := ex.Unanswered(); u != nil {
					t.Errorf("Unanswered = %v", u)
				}
			})
		})
	}
}

// TestMisuseUpdateLog: a nil *UpdateLog is the log of a Work that declares
// no updates (refuses with UpdateRefusedNotDeclared, holds nothing); the
// zero UpdateLog does not panic.
func TestMisuseUpdateLog(t *testing.T) {
	for name, l := range map[string]*work.UpdateLog{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				_, reason := l.Accept("k", []byte(`1`), true, time.Time{})
				if name == "nil" && reason != work.UpdateRefusedNotDeclared {
					t.Errorf("Accept reason = %q, want %q", reason, work.UpdateRefusedNotDeclared)
				}
				_ = l.After(0)
				_, _ = l.Len(), l.Bytes()
				_, _ = l.Open(), l.Answered()
				_ = l.State()
				_ = l.Policy()
				l.End()
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
