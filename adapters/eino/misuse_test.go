package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
)

func misuseEcho() *eino.Child {
	return eino.NewFunction("echo", "Echoes.", func(_ context.Context, in string) (string, error) { return in, nil })
}

// TestMisuseMiddleware: a Middleware New did not make (zero or nil) has no
// engine: Release and RunUntilSettled return ErrNotPrepared, and a run
// listing children fails with ErrNoEngine; one made on a nil, typed nil
// or unready engine fails a run with children with middleware's
// ErrNilEngine or ErrEngineNotReady; never a panic or a hang.
func TestMisuseMiddleware(t *testing.T) {
	ctx := context.Background()
	withChild := func() *adk.ChatModelAgentContext {
		return &adk.ChatModelAgentContext{Tools: []tool.BaseTool{eino.Backgroundable(misuseEcho())}}
	}
	for name, m := range map[string]*eino.Middleware{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				if err := m.Release(); !errors.Is(err, eino.ErrNotPrepared) {
					t.Errorf("Release = %v, want ErrNotPrepared", err)
				}
				if _, err := m.RunUntilSettled(ctx, nil, "x"); !errors.Is(err, eino.ErrNotPrepared) {
					t.Errorf("RunUntilSettled = %v, want ErrNotPrepared", err)
				}
				if m.Engine() != nil || !m.Owner().IsZero() || m.Released() {
					t.Error("has an engine, an owner or a release")
				}
				if _, _, err := m.BeforeAgent(ctx, nil); err != nil {
					t.Errorf("BeforeAgent(nil) = %v", err)
				}
				if _, _, err := m.BeforeAgent(ctx, withChild()); !errors.Is(err, eino.ErrNoEngine) {
					t.Errorf("BeforeAgent(children) = %v, want ErrNoEngine", err)
				}
				if _, _, err := m.BeforeModelRewriteState(ctx, nil, nil); err != nil {
					t.Errorf("BeforeModelRewriteState outside a child = %v", err)
				}
				if inner, err := m.WrapModel(ctx, nil, nil); inner != nil || err != nil {
					t.Errorf("WrapModel(nil) = %v %v", inner, err)
				}
				if _, err := m.WrapInvokableToolCall(ctx, nil, nil); err != nil {
					t.Errorf("WrapInvokableToolCall = %v", err)
				}
			})
		})
	}
	for _, tt := range []struct {
		name string
		sup  *work.Engine
		want error
	}{
		{"nil engine", nil, middleware.ErrNilEngine},
		{"zero engine", new(work.Engine), middleware.ErrEngineNotReady},
		{"zero Portable", driver.NewEngine(new(driver.Portable)), middleware.ErrEngineNotReady},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enginetest.NoHang(t, tt.name, func() {
				m := eino.New(tt.sup)
				if _, _, err := m.BeforeAgent(ctx, withChild()); !errors.Is(err, tt.want) {
					t.Errorf("BeforeAgent = %v, want %v", err, tt.want)
				}
				_ = m.Release()
			})
		})
	}
	t.Run("RunUntilSettled with a nil agent", func(t *testing.T) {
		sup := work.New()
		defer sup.Close(ctx)
		m := eino.New(sup, nil)
		defer m.Release()
		enginetest.NoHang(t, "RunUntilSettled", func() {
			if _, err := m.RunUntilSettled(ctx, nil, "x"); err == nil {
				t.Error("RunUntilSettled(nil agent) succeeded")
			}
		})
	})
}

// TestMisuseChildren: the constructors given nothing make a child that
// Info, InvokableRun and Run refuse with ErrInvalidChild (ErrZeroChild for
// the zero and nil Child); the helpers given nil answer nothing.
func TestMisuseChildren(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		child *eino.Child
		want  error
	}{
		{"zero", &eino.Child{}, eino.ErrZeroChild},
		{"nil", nil, eino.ErrZeroChild},
		{"FromAgent(nil)", eino.FromAgent(nil), eino.ErrInvalidChild},
		{"FromTool(nil)", eino.FromTool(nil), eino.ErrInvalidChild},
		{"NewAgent(nil build)", eino.NewAgent("a", "d", nil), eino.ErrInvalidChild},
		{"NewFunction(nil fn)", eino.NewFunction("f", "d", nil), eino.ErrInvalidChild},
		{"NewJob(zero Job)", eino.NewJob("j", "d", work.Job{}), eino.ErrJobNotPrepared},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enginetest.NoHang(t, tt.name, func() {
				if _, err := tt.child.InvokableRun(ctx, "x"); !errors.Is(err, tt.want) {
					t.Errorf("InvokableRun = %v, want %v", err, tt.want)
				}
				if _, err := tt.child.Run(ctx, "x"); !errors.Is(err, tt.want) {
					t.Errorf("Run = %v, want %v", err, tt.want)
				}
				_, _ = tt.child.Info(ctx)
				_, _ = tt.child.Name(), tt.child.Kind()
				b := eino.Backgroundable(tt.child)
				_, _ = b.Info(ctx)
				if _, err := b.InvokableRun(ctx, "x"); err != nil {
					t.Errorf("Backgroundable's InvokableRun = %v", err)
				}
			})
		})
	}
	enginetest.NoHang(t, "nil ChildOption", func() {
		c := eino.NewFunction("f", "d", func(_ context.Context, in string) (string, error) { return in, nil }, nil)
		if out, err := c.Run(ctx, "x"); out != "x" || err != nil {
			t.Errorf("Run = %q %v", out, err)
		}
	})
	enginetest.NoHang(t, "helpers", func() {
		var zb eino.BackgroundChild
		if _, err := zb.Info(ctx); !errors.Is(err, eino.ErrZeroChild) {
			t.Errorf("zero BackgroundChild's Info = %v, want ErrZeroChild", err)
		}
		if eino.ProviderNameOf(nil) != "" {
			t.Error("ProviderNameOf(nil) names a provider")
		}
		if _, _, ok := eino.ResponseUsage(nil); ok {
			t.Error("ResponseUsage(nil) reports usage")
		}
	})
}
