package middleware_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
)

// TestMisuseKit: a Kit Prepare did not make (zero or nil) has no tools,
// an empty status block and the zero Owner, and its Release and
// RunUntilSettled return ErrNotPrepared; a prepared Kit refuses a nil run
// (ErrNilRun) and, after its Release, RunUntilSettled (ErrReleased).
func TestMisuseKit(t *testing.T) {
	run := func(context.Context, middleware.Resume) (string, error) { return "", nil }
	for name, k := range map[string]*middleware.Kit{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				if err := k.Release(); !errors.Is(err, middleware.ErrNotPrepared) {
					t.Errorf("Release = %v, want ErrNotPrepared", err)
				}
				if _, err := k.RunUntilSettled(t.Context(), run); !errors.Is(err, middleware.ErrNotPrepared) {
					t.Errorf("RunUntilSettled = %v, want ErrNotPrepared", err)
				}
				if tools := k.Tools(); len(tools) != 0 {
					t.Errorf("Tools = %v", tools)
				}
				if b := k.StatusBlock(t.Context()); b != "" {
					t.Errorf("StatusBlock = %q", b)
				}
				if !k.Owner().IsZero() || k.HasWork() || k.Reports() || k.Released() {
					t.Error("the Kit reports an owner, work, reports or a release")
				}
				if r, f := k.UpdateReport("x"); r || f != nil {
					t.Error("UpdateReport reports")
				}
			})
		})
	}
	sup := work.New()
	defer sup.Close(t.Context())
	kit, err := middleware.PrepareWith(t.Context(), sup, work.NewOwner("coord"), map[string]any{
		"job": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo}),
	}, nil)
	if err != nil {
		t.Fatalf("PrepareWith(nil option) = %v", err)
	}
	enginetest.NoHang(t, "prepared", func() {
		if _, err := kit.RunUntilSettled(t.Context(), nil); !errors.Is(err, middleware.ErrNilRun) {
			t.Errorf("RunUntilSettled(nil run) = %v, want ErrNilRun", err)
		}
		if _, err := kit.RunUntilSettled(t.Context(), run, nil, middleware.WithOnAnswer(nil)); err != nil {
			t.Errorf("RunUntilSettled(nil options) = %v", err)
		}
		if err := kit.Release(); err != nil {
			t.Errorf("Release = %v", err)
		}
		if err := kit.Release(); err != nil {
			t.Errorf("second Release = %v", err)
		}
		if _, err := kit.RunUntilSettled(t.Context(), run); !errors.Is(err, middleware.ErrReleased) {
			t.Errorf("RunUntilSettled after Release = %v, want ErrReleased", err)
		}
	})
}

// TestMisusePrepareEngines: Prepare refuses a typed nil engine of any
// type with ErrNilEngine and an engine not set up (a zero Portable, as a
// runner's zero Engine) with ErrEngineNotReady; nil entries are
// ErrInvalidEntry.
func TestMisusePrepareEngines(t *testing.T) {
	o := work.NewOwner("coord")
	entries := func() map[string]any {
		return map[string]any{"job": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo})}
	}
	sup := work.New()
	defer sup.Close(t.Context())
	for _, tt := range []struct {
		name    string
		sup     *work.Engine
		entries map[string]any
		want    error
	}{
		{"nil engine", (*work.Engine)(nil), entries(), middleware.ErrNilEngine},
		{"zero Portable", driver.NewEngine(new(driver.Portable)), entries(), middleware.ErrEngineNotReady},
		{"nil entry", sup, map[string]any{"x": nil}, middleware.ErrInvalidEntry},
		{"zero BackgroundChild", sup, map[string]any{"x": middleware.BackgroundChild{}}, middleware.ErrInvalidEntry},
		{"Backgroundable(zero Child)", sup, map[string]any{"x": middleware.Backgroundable(middleware.Child{})}, middleware.ErrInvalidChild},
		{"zero Child", sup, map[string]any{"x": middleware.Child{}}, middleware.ErrInvalidChild},
		{"nil Tool", sup, map[string]any{"x": middleware.Tool(nil)}, middleware.ErrInvalidEntry},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			enginetest.NoHang(t, tt.name, func() { _, err = middleware.PrepareContext(t.Context(), tt.sup, o, tt.entries) })
			if !errors.Is(err, tt.want) {
				t.Fatalf("Prepare = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestMisuseHelpers: the package's other entries given nil or zero
// values answer without a panic: no owner claim for a nil engine, a nil
// claim's Release does nothing, an empty updates block, the zero Boundary
// outside a child run.
func TestMisuseHelpers(t *testing.T) {
	enginetest.NoHang(t, "helpers", func() {
		if c, err := middleware.ClaimOwner(nil, "x"); c != nil || err != nil {
			t.Errorf("ClaimOwner(nil) = %v %v", c, err)
		}
		var typed *work.Engine
		c, err := middleware.ClaimOwner(typed, "x")
		if err != nil {
			t.Errorf("ClaimOwner(typed nil) = %v", err)
		}
		c.Release()
		var nilClaim *middleware.OwnerClaim
		nilClaim.Release()
		new(middleware.OwnerClaim).Release()
		if b := middleware.UpdatesBlock(nil); b != "" {
			t.Errorf("UpdatesBlock(nil) = %q", b)
		}
		b, notes, err := middleware.BeginRequest(context.Background())
		if b.InChild() || b.Final() || notes != nil || err != nil {
			t.Errorf("BeginRequest outside a child = %+v %v %v", b, notes, err)
		}
		if n := b.End(1, 1, true); n != -1 {
			t.Errorf("zero Boundary End = %d, want -1", n)
		}
		if b.Budget() != "" || b.FinalInstruction() != "" {
			t.Error("zero Boundary names a budget")
		}
		if _, err := middleware.ParseDuration(""); err == nil {
			t.Error(`ParseDuration("") succeeded`)
		}
		if s := (middleware.Settled{}).Answer(); s != "" {
			t.Errorf("zero Settled's Answer = %q", s)
		}
		_ = middleware.ErrorObject{}.JSON()
		out, err := middleware.UpdateTool().Call(context.Background(), "")
		if err != nil || out == "" {
			t.Errorf("UpdateTool outside a child = %q %v, want an error object", out, err)
		}
	})
}
