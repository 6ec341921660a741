package langchaingo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

// TestZeroValues: the zero and nil values of every exported adapter type
// return stable errors (errors.Is-able sentinels) or zero results, and
// never panic; so does a Model given a nil context.
func TestZeroValues(t *testing.T) {
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	var (
		zk   lc.Kit
		nk   *lc.Kit
		zm   lc.Model
		nm   *lc.Model
		zc   lc.Child
		nc   *lc.Child
		zb   lc.BackgroundChild
		zs   lc.Settled
		exec = agents.NewExecutor(agents.NewOpenAIFunctionsAgent(scripted.New(scripted.Text("x")), nil))
	)
	generate := func(m *lc.Model) func() error {
		return func() error { _, err := m.GenerateContent(ctx, msgs); return err }
	}
	call := func(m *lc.Model) func() error {
		return func() error { _, err := m.Call(ctx, "hi"); return err }
	}
	for _, tc := range []struct {
		name string
		fn   func() error
		want error // nil: must not fail
	}{
		{"zero Kit Model GenerateContent", generate(zk.Model()), lc.ErrZeroModel},
		{"zero Kit Model Call", call(zk.Model()), lc.ErrZeroModel},
		{"nil Kit Model GenerateContent", func() error { return generate(nk.Model())() }, lc.ErrZeroModel},
		{"zero Model GenerateContent", generate(&zm), lc.ErrZeroModel},
		{"new Model GenerateContent", generate(&lc.Model{}), lc.ErrZeroModel},
		{"nil Model GenerateContent", generate(nm), lc.ErrZeroModel},
		{"zero Model Call", call(&zm), lc.ErrZeroModel},
		{"nil ctx GenerateContent", func() error {
			//lint:ignore SA1012 a nil context is what is tested
			_, err := lc.WrapModel(scripted.New(scripted.Text("x"))).GenerateContent(nil, msgs) //nolint:staticcheck
			return err
		}, lc.ErrNilContext},
		{"nil ctx Call", func() error {
			//lint:ignore SA1012 a nil context is what is tested
			_, err := lc.WrapModel(scripted.New(scripted.Text("x"))).Call(nil, "hi") //nolint:staticcheck
			return err
		}, lc.ErrNilContext},
		{"zero Model Unwrap", func() error {
			if zm.Unwrap() != nil || nm.Unwrap() != nil {
				return errors.New("zero Model unwraps to a model")
			}
			return nil
		}, nil},
		{"zero Model ProviderName", func() error {
			if lc.ProviderName(&zm) != "" || lc.ProviderName(nm) != "" {
				return errors.New("zero Model has a provider")
			}
			return nil
		}, nil},
		{"zero Kit RunUntilSettled", func() error { _, err := zk.RunUntilSettled(ctx, exec, "go"); return err }, lc.ErrNotPrepared},
		{"nil Kit RunUntilSettled", func() error { _, err := nk.RunUntilSettled(ctx, exec, "go"); return err }, lc.ErrNotPrepared},
		{"nil Kit Release", nk.Release, lc.ErrNotPrepared},
		{"nil Kit Tools Owner Middleware", func() error {
			if len(nk.Tools()) != 0 || !nk.Owner().IsZero() || nk.Middleware() != nil || len(zk.Tools()) != 0 {
				return errors.New("nil Kit has tools, an owner or a Kit")
			}
			return nil
		}, nil},
		{"zero Child", func() error {
			if zc.Name() != "" || zc.Description() != "" || nc.Name() != "" || nc.Description() != "" {
				return errors.New("zero Child has a name")
			}
			_, err := nc.Call(ctx, "x")
			return err
		}, lc.ErrZeroChild},
		{"zero Background", func() error {
			out, err := zb.Call(ctx, "x")
			if err != nil || misCode(out) != "not_prepared" || zb.Name() != "" || zb.Description() != "" {
				return errors.New("zero Background: " + out)
			}
			return nil
		}, nil},
		{"Backgroundable of the zero Child", func() error {
			out, err := lc.Backgroundable(&zc).Call(ctx, "x")
			if err != nil || misCode(out) != "not_prepared" {
				return errors.New("Backgroundable(zero Child): " + out)
			}
			return nil
		}, nil},
		{"zero Settled", func() error {
			if zs.Answer() != "" {
				return errors.New("zero Settled has an answer")
			}
			return nil
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			misNoPanic(t, tc.name, func() { err = tc.fn() })
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRunUntilSettledAfterRelease: a released Kit's RunUntilSettled fails
// with ErrReleased before it runs the chain or reads the engine, also when
// a new Kit has the same owner and live Work there.
func TestRunUntilSettledAfterRelease(t *testing.T) {
	sup := misSup(t)
	ts := func() []tools.Tool { return []tools.Tool{lc.Backgroundable(misBlocked("job"))} }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := false
	model := scripted.New(scripted.Func(func(scripted.Request) scripted.Step {
		ran = true
		cancel() // without the fix the helper would wait on the new Kit's Work
		return scripted.Text("answer")
	}))
	old, err := lc.Prepare(context.Background(), sup, model, ts(), lc.WithOwner("coord"))
	if err != nil {
		t.Fatal(err)
	}
	chain := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(old.Model(), old.Tools()))
	if err := old.Release(); err != nil {
		t.Fatal(err)
	}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), ts(), lc.WithOwner("coord"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	misLaunch(t, kit, "job") // live Work of the same owner id

	_, err = old.RunUntilSettled(ctx, chain, "go")
	if !errors.Is(err, lc.ErrReleased) || ran {
		t.Fatalf("RunUntilSettled after Release: %v (chain ran: %v), want ErrReleased", err, ran)
	}
}
