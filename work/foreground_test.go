package work_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

func TestForegroundCall(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	out, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, ok := work.ExecutionFrom(ctx)
		if !ok || ex.WorkID() != "" || boundary.Guidance(ex) != nil || ex.Scope().Depth() != 1 {
			return "", errors.New("bad execution")
		}
		return "exact output", nil
	}})
	if err != nil || out != "exact output" {
		t.Fatalf("call = %q %v", out, err)
	}
	for _, tt := range []struct {
		name  string
		run   work.RunFunc
		class string
	}{
		{"error", func(context.Context) (string, error) { return "", errBoom }, work.ClassError},
		{"panic", func(context.Context) (string, error) { panic(canary) }, work.ClassPanic},
	} {
		_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: tt.run})
		var we *work.Error
		if !errors.As(err, &we) || we.Code != "child_failed" || we.Class != tt.class {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	// Caller cancellation.
	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	_, err = h.s.Call(ctx, work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}})
	if !errors.Is(err, work.ErrCancelled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// Completion wins over a late caller cancellation.
	ctx, cancel = context.WithCancel(t.Context())
	out, err = h.s.Call(ctx, work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		cancel()
		return "made it", nil
	}})
	if err != nil || out != "made it" {
		t.Fatalf("completion after cancel: %q %v", out, err)
	}
	// The child's own background Work is released when it returns.
	var inner work.Ref
	_, err = h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		var err error
		inner, err = h.s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: fn, Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
		return "", err
	}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := h.obs.waitTerminal(inner.ID); ev.To != work.StateCancelled {
		t.Fatalf("inner = %+v", ev)
	}
	if n := censusTotal(h.s); n != 0 {
		t.Fatalf("census = %v", census(h.s))
	}
}

func TestForegroundDeadline(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Minute}))
	done := make(chan error)
	go func() {
		_, err := h.s.Call(context.Background(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
		done <- err
	}()
	h.clk.BlockUntil(1)
	h.clk.Advance(time.Minute)
	var we *work.Error
	if err := <-done; !errors.As(err, &we) || we.Class != work.ClassDeadline {
		t.Fatalf("err = %v", err)
	}
}

// TestForegroundGoexit: a foreground child that calls runtime.Goexit
// yields child_failed (class panic), and the caller's goroutine, here the
// test's own, carries on.
func TestForegroundGoexit(t *testing.T) {
	h := newHarness(t)
	_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		runtime.Goexit()
		return "", nil
	}})
	var we *work.Error
	if !errors.As(err, &we) || we.Code != "child_failed" || we.Class != work.ClassPanic {
		t.Fatalf("Call = %v, want child_failed (panic)", err)
	}
	// The engine is not left waiting for the call.
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
