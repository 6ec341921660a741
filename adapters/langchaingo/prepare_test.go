package langchaingo_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// TestRetrofit: an OpenAIFunctionsAgent can be prepared after it was
// built; the text agents cannot, and the error says to rebuild them.
func TestRetrofit(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	job := lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "job output", nil })
	lookup := constTool("lookup", "looked up")
	log := &toolLog{}
	m := scripted.New(
		scripted.ToolCall("job", `{"input":"x","run_in_background":true}`),
		scripted.Func(func(scripted.Request) scripted.Step {
			id := refID(log.outputs("job")[0], "job")
			return scripted.ToolCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
		}),
		scripted.Text("done"),
	)
	original := agents.NewOpenAIFunctionsAgent(m, []tools.Tool{lookup, lc.Backgroundable(job)})
	a, kit, err := lc.Retrofit(ctx, sup, original)
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	fa := a.(*agents.OpenAIFunctionsAgent)
	fa.Tools = log.wrap(fa.Tools)
	if out, err := chains.Run(ctx, agents.NewExecutor(fa), "go"); err != nil || out != "done" {
		t.Fatalf("run = %q, %v", out, err)
	}
	if got := log.outputs("work"); len(got) != 1 || got[0] != "job output" {
		t.Errorf("result = %q", got)
	}
	if names := m.Requests()[0].ToolNames(); len(names) != 6 || names[2] != "work" {
		t.Errorf("offered = %q, want lookup, job, work as Tools and Functions", names)
	}
	if len(original.Tools) != 2 || original.LLM != llms.Model(m) {
		t.Errorf("Retrofit changed the original agent")
	}

	for _, orig := range []agents.Agent{
		agents.NewOneShotAgent(m, []tools.Tool{lc.Backgroundable(job)}),
		agents.NewConversationalAgent(m, []tools.Tool{lc.Backgroundable(job)}),
	} {
		if _, _, err := lc.Retrofit(ctx, sup, orig); err == nil || !strings.Contains(err.Error(), "rebuild") {
			t.Errorf("Retrofit(%T) error = %v, want one saying to rebuild", orig, err)
		}
	}
}

// TestPrepareErrors lists the preparation errors.
func TestPrepareErrors(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "", nil }
	tests := []struct {
		name  string
		model llms.Model
		tools []tools.Tool
		opts  []lc.Option
		want  string
	}{
		{"duplicate names", scripted.New(), []tools.Tool{constTool("a", ""), constTool("a", "")}, nil, `two tools are named "a"`},
		{"duplicate child", scripted.New(), []tools.Tool{lc.NewFunction("a", "", fn), lc.Backgroundable(lc.NewFunction("a", "", fn))}, nil, `two tools are named "a"`},
		{"names differing only in case", scripted.New(), []tools.Tool{constTool("Search", ""), constTool("search", "")}, nil, "differ only in case"},
		{"authored WORK child", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn)), lc.NewFunction("WORK", "", fn)}, nil, `"WORK"`},
		{"work in the prompt", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn))}, []lc.Option{lc.WithPromptTools("work")}, `"work"`},
		{"Work in the prompt", scripted.New(), []tools.Tool{lc.Backgroundable(lc.NewFunction("a", "", fn))}, []lc.Option{lc.WithPromptTools("Work")}, `"Work"`},
		{"typed nil tool", scripted.New(), []tools.Tool{(*ptrTool)(nil)}, nil, "tool 0 is nil (*langchaingo_test.ptrTool)"},
		{"typed nil child", scripted.New(), []tools.Tool{constTool("a", ""), (*lc.Child)(nil)}, nil, "tool 1 is nil (*langchaingo.Child)"},
		{"FromTool of nil", scripted.New(), []tools.Tool{lc.Backgroundable(lc.FromTool(nil))}, nil, "nil tool"},
		{"FromTool of typed nil", scripted.New(), []tools.Tool{lc.FromTool((*ptrTool)(nil))}, nil, "nil tool"},
		{"FromExecutor of nil", scripted.New(), []tools.Tool{lc.FromExecutor("a", "", nil)}, nil, "nil executor"},
		{"typed nil model", (*scripted.Model)(nil), nil, nil, "nil model"},
		{"schema not an object", scripted.New(), []tools.Tool{lc.NewFunction("a", "", fn, lc.WithSchema(map[string]any{"type": "string"}))}, nil, "object schema"},
		{"nil tool", scripted.New(), []tools.Tool{nil}, nil, "nil"},
		{"nil model", nil, nil, nil, "nil model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kit, err := lc.Prepare(context.Background(), sup, tt.model, tt.tools, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Prepare error = %v, want one containing %q", err, tt.want)
			}
			if kit != nil {
				t.Errorf("Prepare returned a Kit with its error")
			}
		})
	}
}

// ptrTool is a tool with pointer methods, so that a nil *ptrTool is a
// typed nil: its Name dereferences and panics.
type ptrTool struct{ name string }

func (p *ptrTool) Name() string                                 { return p.name }
func (p *ptrTool) Description() string                          { return "a pointer tool" }
func (p *ptrTool) Call(context.Context, string) (string, error) { return p.name, nil }

// TestPrepareKeepsOrder: Kit.Tools is in the caller's order, work last.
func TestPrepareKeepsOrder(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	fn := func(context.Context, string) (string, error) { return "", nil }
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{
		constTool("zeta", ""), lc.Backgroundable(lc.NewFunction("mid", "", fn)), constTool("alpha", ""), lc.NewFunction("beta", "", fn),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	var got []string
	for _, tl := range kit.Tools() {
		got = append(got, tl.Name())
	}
	if want := "zeta mid alpha beta work"; strings.Join(got, " ") != want {
		t.Errorf("tools = %v, want %s", got, want)
	}
}

// TestNestedPrepare: a child built with NewAgent whose build func calls
// Prepare with its ctx gets an owner one level deeper, and background work
// of its own.
func TestNestedPrepare(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	var (
		mu     sync.Mutex
		owners []work.Owner
	)
	leaf := lc.NewFunction("leaf", "A leaf job.", func(context.Context, string) (string, error) { return "leaf output", nil })
	nested := lc.NewAgent("nested", "Has background work of its own.", func(ctx context.Context) (*agents.Executor, error) {
		log := &toolLog{}
		m := scripted.New(
			scripted.ReActCall("leaf", `{"input":"x","run_in_background":true}`),
			scripted.Func(func(scripted.Request) scripted.Step {
				id := refID(log.outputs("leaf")[0], "leaf")
				return scripted.ReActCall("work", js(map[string]string{"action": "result", "id": id, "timeout": "10s"}))
			}),
			scripted.Func(func(scripted.Request) scripted.Step {
				return scripted.ReActFinal("nested saw: " + log.outputs("work")[0])
			}),
		)
		kit, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(leaf)})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		owners = append(owners, kit.Owner())
		mu.Unlock()
		return agents.NewExecutor(agents.NewOneShotAgent(kit.Model(), log.wrap(kit.Tools()))), nil
	})
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(nested)}, lc.WithOwner("top"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "nested")
	if out := callOK(t, ctx, tool, `{"input":"go"}`); out != "nested saw: leaf output" {
		t.Errorf("foreground nested = %q", out)
	}
	id := refID(callOK(t, ctx, tool, `{"input":"go","run_in_background":true}`), "nested")
	if out := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]string{"action": "result", "id": id, "timeout": "10s"})); out != "nested saw: leaf output" {
		t.Errorf("background nested = %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(owners) != 2 {
		t.Fatalf("built %d nested kits, want 2", len(owners))
	}
	for _, o := range owners {
		if o.Depth() != 1 || !strings.HasPrefix(o.ID(), "top/") {
			t.Errorf("nested owner = %q depth %d, want top/... depth 1", o.ID(), o.Depth())
		}
	}
	if owners[1].ID() != "top/"+id {
		t.Errorf("background nested owner = %q, want top/%s", owners[1].ID(), id)
	}
}

// TestUnpreparedBackground: a BackgroundChild used outside Prepare does
// nothing and says so, without a Go error.
func TestUnpreparedBackground(t *testing.T) {
	ran := false
	b := lc.Backgroundable(lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { ran = true; return "", nil }))
	out, err := b.Call(context.Background(), `{"input":"x","run_in_background":true}`)
	if err != nil || !strings.Contains(out, `"code":"not_prepared"`) || ran {
		t.Errorf("Call = %q, %v (ran %v)", out, err, ran)
	}
}
