package langchaingo_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestAutoBackgroundThroughTheAdapter: the adapter passes the options to
// the middleware: a call without run_in_background of a child with
// WithAutoBackground returns the work.ref at the bound, idempotent on the
// model's tool-call id; the model reads the output with the work tool; a
// child given the Kit's default (WithDefaultAutoBackground) that returns
// in time gives its exact output.
func TestAutoBackgroundThroughTheAdapter(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	gate := make(chan struct{})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	slow := lc.NewFunction("slow", "Takes a while.", func(ctx context.Context, _ string) (string, error) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return "slow output", nil
	}, lc.WithAutoBackground(50*time.Millisecond))
	fast := lc.NewFunction("fast", "Returns at once.", func(_ context.Context, in string) (string, error) { return "fast " + in, nil })

	log := &toolLog{}
	var id string
	m := scripted.New(
		scripted.ToolCalls(scripted.Call{ID: "tc-slow", Name: "slow", Arguments: `{"input":"go"}`},
			scripted.Call{ID: "tc-fast", Name: "fast", Arguments: `{"input":"go"}`}),
		scripted.Func(func(scripted.Request) scripted.Step {
			id = refID(log.outputs("slow")[0], "slow")
			close(gate)
			return scripted.ToolCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
		}),
		scripted.Text("done"),
	)
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(slow), lc.Backgroundable(fast)},
		lc.WithDefaultAutoBackground(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	for _, tl := range kit.Tools() {
		want := map[string]string{"slow": "0.05 seconds", "fast": "60 seconds"}[tl.Name()]
		if want != "" && !strings.Contains(tl.Description(), `A call without "run_in_background" that takes longer than `+want) {
			t.Errorf("%s's description does not tell the model its bound (%s): %q", tl.Name(), want, tl.Description())
		}
	}
	if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), log.wrap(kit.Tools())), agents.WithMaxIterations(4)), "go"); err != nil {
		t.Fatal(err)
	}
	if id == "" {
		t.Fatalf("the slow call did not return a work.ref: %q", log.outputs("slow"))
	}
	wantRef(t, log.outputs("slow")[0], "slow")
	if got := log.outputs("fast"); len(got) != 1 || got[0] != "fast go" {
		t.Errorf("fast = %q; want its exact output", got)
	}
	if got := log.outputs("work"); len(got) != 1 || got[0] != "slow output" {
		t.Errorf("result = %q", got)
	}
	// The repeated tool-call id gets the same Work's output now.
	var slowTool middleware.Tool
	for _, x := range kit.Middleware().Tools() {
		if x.Name() == "slow" {
			slowTool = x
		}
	}
	if out, _ := slowTool.Call(middleware.WithCallID(ctx, "tc-slow"), `{"input":"go"}`); out != "slow output" {
		t.Errorf("the same tool call again = %q", out)
	}
}

// TestBackgroundOptionErrors: the options on a child that is not
// Backgroundable, and a bound of zero or less, fail Prepare with
// middleware's sentinel.
func TestBackgroundOptionErrors(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "", nil }
	m := scripted.New(scripted.Text("x"))
	for name, tc := range map[string]struct {
		tool tools.Tool
		opts []lc.Option
	}{
		"auto on a foreground child":    {lc.NewFunction("c", "C.", fn, lc.WithAutoBackground(time.Second)), nil},
		"default on a foreground child": {lc.NewFunction("c", "C.", fn, lc.WithBackgroundDefault()), nil},
		"zero bound":                    {lc.Backgroundable(lc.NewFunction("c", "C.", fn, lc.WithAutoBackground(0))), nil},
		"zero Kit default":              {lc.Backgroundable(lc.NewFunction("c", "C.", fn)), []lc.Option{lc.WithDefaultAutoBackground(0)}},
	} {
		if _, err := lc.Prepare(ctx, sup, m, []tools.Tool{tc.tool}, tc.opts...); !errors.Is(err, middleware.ErrInvalidBackgroundOption) {
			t.Errorf("%s: err = %v; want ErrInvalidBackgroundOption", name, err)
		}
	}
	kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(lc.NewFunction("d", "D.", fn, lc.WithBackgroundDefault()))})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if d := kit.Tools()[0].Description(); !strings.Contains(d, "runs in the background by default") {
		t.Errorf("the default child's description: %q", d)
	}
}

// TestReadmeAutoBackground runs the README's auto-background code: the
// child's own bound wins over the Kit's default.
func TestReadmeAutoBackground(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	kit, err := readmeAutoBackground(context.Background(), sup, scripted.New(scripted.Text("x")),
		func(context.Context, string) (string, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if d := kit.Tools()[0].Description(); !strings.Contains(d, "takes longer than 30 seconds") {
		t.Errorf("description %q", d)
	}
}
