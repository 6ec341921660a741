package work_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// A Work's child context is made only when the child looks at it (the
// engine records a cancellation that comes first). These tests look at it
// only after the event, and expect what a context made as the Work started
// would show.

// TestChildContextCancelledBeforeLooked: each way the engine ends a
// running Work's context, seen by a child that looks only afterwards.
func TestChildContextCancelledBeforeLooked(t *testing.T) {
	for _, tt := range []struct {
		name  string
		end   func(h *harness, ref work.Ref)
		cause string // in context.Cause's text
	}{
		{"cancel", func(h *harness, ref work.Ref) {
			if _, err := h.s.Cancel(t.Context(), coord, ref.ID); err != nil {
				t.Fatal(err)
			}
		}, "cancel requested"},
		{"close", func(h *harness, ref work.Ref) {
			go h.s.Close(context.Background()) // returns once the child has
		}, "engine closed"},
		{"deadline", func(h *harness, ref work.Ref) {
			h.clk.BlockUntil(1)
			h.clk.Advance(work.DefaultMaxDuration)
		}, "maximum duration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			looked := make(chan error, 1)
			gate := make(chan struct{})
			ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: func(ctx context.Context) (string, error) {
				<-gate // the context is not looked at before the end
				<-ctx.Done()
				if !errors.Is(ctx.Err(), context.Canceled) {
					looked <- ctx.Err()
				}
				looked <- context.Cause(ctx)
				return "", ctx.Err()
			}})
			if err != nil {
				t.Fatal(err)
			}
			tt.end(h, ref)
			close(gate)
			cause := <-looked
			if cause == nil || !strings.Contains(cause.Error(), tt.cause) {
				t.Fatalf("context.Cause = %v, want %q", cause, tt.cause)
			}
			h.obs.waitTerminal(ref.ID)
		})
	}
}

// TestChildContextEndsWithWork: a context the child kept (a goroutine it
// started) ends as the Work settles, looked at or not.
func TestChildContextEndsWithWork(t *testing.T) {
	for _, look := range []bool{false, true} {
		h := newHarness(t)
		kept := make(chan context.Context, 1)
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: func(ctx context.Context) (string, error) {
			if look && ctx.Err() != nil {
				return "", ctx.Err()
			}
			kept <- ctx
			return "x", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		h.obs.waitTerminal(ref.ID)
		ctx := <-kept
		<-ctx.Done()
		if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
			t.Fatalf("looked %v: Err %v, Cause %v", look, ctx.Err(), context.Cause(ctx))
		}
	}
}

// TestChildContextDerived: contexts derived from a child's (a value and a
// cancel on top, as instrumented code does) are cancelled with it, with
// its cause, and take no goroutine each (context.WithCancel finds the
// cancellable context under a value; a context type it does not know
// would cost a goroutine per derived context).
func TestChildContextDerived(t *testing.T) {
	const n = 1000
	h := newHarness(t)
	derived := make(chan []context.Context, 1)
	added := make(chan int, 1)
	type key struct{}
	gate := make(chan struct{})
	ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: fn, Run: func(ctx context.Context) (string, error) {
		g0 := runtime.NumGoroutine()
		var cs []context.Context
		for i := range n {
			c, cancel := context.WithCancel(context.WithValue(ctx, key{}, i))
			defer cancel()
			cs = append(cs, c)
		}
		added <- runtime.NumGoroutine() - g0
		derived <- cs
		<-gate
		return "", ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if d := <-added; d >= n/2 {
		t.Fatalf("%d derived contexts added %d goroutines", n, d)
	}
	cs := <-derived
	if _, err := h.s.Cancel(t.Context(), coord, ref.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		<-c.Done()
		if cause := context.Cause(c); cause == nil || !strings.Contains(cause.Error(), "cancel requested") {
			t.Fatalf("derived context.Cause = %v", cause)
		}
	}
	close(gate)
	if ev := h.obs.waitTerminal(ref.ID); ev.To != work.StateCancelled {
		t.Fatalf("terminal = %+v", ev)
	}
}
