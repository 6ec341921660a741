package scripted_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

// named is a tool that echoes its input.
type named string

func (n named) Name() string                                      { return string(n) }
func (n named) Description() string                               { return "Echoes." }
func (n named) Call(_ context.Context, in string) (string, error) { return in, nil }

// TestRouteConcurrentAgents: two agents run at once on one Router, a
// coordinator (offered the work tool) and a child; each is answered by
// its own script whatever the order of their requests. On one shared
// Model the two would take each other's steps.
func TestRouteConcurrentAgents(t *testing.T) {
	for range 10 {
		coordinator := scripted.New(scripted.FunctionsCall("work", "list"), scripted.Text("coordinator's answer"))
		child := scripted.New(scripted.FunctionsCall("search", "go"), scripted.Text("child's report"))
		llm := scripted.Route(scripted.When(scripted.Declares("work"), coordinator), scripted.Otherwise(child))

		run := func(tool string, out *string, errp *error, start *sync.WaitGroup, done *sync.WaitGroup) {
			defer done.Done()
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{named(tool)}))
			start.Wait()
			*out, *errp = chains.Run(context.Background(), exec, "task for "+tool)
		}
		var start, done sync.WaitGroup
		start.Add(1)
		done.Add(2)
		var cOut, chOut string
		var cErr, chErr error
		go run("work", &cOut, &cErr, &start, &done)
		go run("search", &chOut, &chErr, &start, &done)
		start.Done()
		done.Wait()
		if cErr != nil || chErr != nil {
			t.Fatalf("errors: coordinator %v, child %v", cErr, chErr)
		}
		if cOut != "coordinator's answer" || chOut != "child's report" {
			t.Fatalf("coordinator answered %q, child %q", cOut, chOut)
		}
		if coordinator.Remaining() != 0 || child.Remaining() != 0 {
			t.Fatalf("steps left: coordinator %d, child %d", coordinator.Remaining(), child.Remaining())
		}
		for _, r := range coordinator.Requests() {
			if !strings.Contains(r.Text(), "task for work") {
				t.Fatalf("the coordinator's script answered another agent's request: %q", r.Text())
			}
		}
	}
}

func TestRouteMatching(t *testing.T) {
	ctx := context.Background()
	a := scripted.New(scripted.Text("a"))
	b := scripted.New(scripted.Text("b"), scripted.Text("b2"))
	r := scripted.Route(
		scripted.When(scripted.HumanContains("alpha"), a),
		scripted.When(scripted.Declares("beta"), b),
	)
	text := func(resp *llms.ContentResponse, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Content
	}
	if got := text(r.GenerateContent(ctx, human("an alpha task"))); got != "a" {
		t.Fatalf("alpha -> %q", got)
	}
	beta := llms.WithFunctions([]llms.FunctionDefinition{{Name: "beta"}})
	if got := text(r.GenerateContent(ctx, human("other"), beta)); got != "b" {
		t.Fatalf("beta -> %q", got)
	}
	if got, err := r.Call(ctx, "plain", beta); err != nil || got != "b2" {
		t.Fatalf("Call -> %q, %v", got, err)
	}
	if _, err := r.GenerateContent(ctx, human("gamma")); !errors.Is(err, scripted.ErrNoRoute) || !strings.Contains(err.Error(), "gamma") {
		t.Fatalf("unrouted request: %v", err)
	}
	if len(a.Requests()) != 1 || len(b.Requests()) != 2 {
		t.Fatalf("requests: a %d, b %d", len(a.Requests()), len(b.Requests()))
	}

	if _, err := scripted.Route(scripted.Otherwise(nil)).GenerateContent(ctx, human("x")); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("nil model: %v", err)
	}
	if _, err := (&scripted.Router{}).GenerateContent(ctx, human("x")); !errors.Is(err, scripted.ErrNoRoute) {
		t.Fatalf("zero Router: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := scripted.Route(scripted.Otherwise(a)).GenerateContent(done, human("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
	if got := scripted.Route().ProviderName(); got != "scripted" {
		t.Fatalf("ProviderName = %q", got)
	}
}
