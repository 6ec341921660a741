package eino_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// gate is a child agent's tool that signals when it is entered and
// returns when released: the test holds the child between two of its
// model requests, with no sleep.
type gate struct {
	entered, release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

func (g *gate) tool(t testing.TB) tool.InvokableTool {
	t.Helper()
	tl, err := utils.InferTool("wait_for_data", "Waits for data.", func(ctx context.Context, _ struct{}) (string, error) {
		close(g.entered)
		select {
		case <-g.release:
		case <-ctx.Done():
		}
		return "data ready", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// researcher is an agent child on m: a ChatModelAgent with the child
// middleware and tools.
func researcher(t testing.TB, m *scripted.Model, tools ...tool.BaseTool) *eino.Child {
	return eino.FromAgent(newAgent(t, "researcher", m, tools, eino.ChildMiddleware()))
}

// An agent child runs isolated: its requests hold its own instruction and
// input only (none of the coordinator's messages, no status block) and
// its own tools; its output is its last answer, exactly.
func TestAgentChildIsolated(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	child := scripted.New(scripted.Text("Go was announced in 2009."))
	coord := scripted.New(
		scripted.Call("researcher", `{"input":"when was Go announced?","run_in_background":true}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			return workCall("result", ref(t, r.LastToolResult()).ID, "timeout", "10s")
		}),
		scripted.Text("done"),
	)
	agent := newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(researcher(t, child))}, mw)
	_, results := mustRun(t, agent, "SECRET coordinator prompt")
	if results[1] != "Go was announced in 2009." {
		t.Fatalf("result = %q, want the child's exact output", results[1])
	}
	reqs := child.Requests()
	if len(reqs) != 1 {
		t.Fatalf("child requests = %d", len(reqs))
	}
	msgs := reqs[0].Messages
	if len(msgs) != 2 || msgs[0].Text != "You are the researcher." || msgs[1].Text != "when was Go announced?" {
		t.Fatalf("child request = %+v, want its own instruction and input only", msgs)
	}
	if strings.Contains(reqs[0].Text(), "SECRET") || strings.Contains(reqs[0].Text(), "[background work]") || len(reqs[0].Tools) != 0 {
		t.Fatal("the child saw the coordinator's prompt, status block or tools")
	}
}

// Guidance sent while the child works reaches it at its next model
// request, framed, once, in its conversation; a cancel stops it at the
// next request.
func TestAgentChildGuidanceAndCancel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action string
		want   observe.State
	}{
		{"send", "send", work.StateCompleted},
		{"cancel", "cancel", work.StateCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sup := newSup(t)
			mw := eino.New(sup)
			defer mw.Release()
			g := newGate()
			child := scripted.New(scripted.Call("wait_for_data", `{}`), scripted.Text("answer"))
			var id string
			coord := scripted.New(
				scripted.Call("researcher", `{"input":"task","run_in_background":true}`),
				scripted.Func(func(r scripted.Request) scripted.Step {
					id = ref(t, r.LastToolResult()).ID
					<-g.entered // the child is between its requests
					if tc.action == "send" {
						return scripted.Call("work", `{"action":"send","id":"`+id+`","message":"focus on 2009"}`)
					}
					return workCall("cancel", id)
				}),
				scripted.Func(func(scripted.Request) scripted.Step {
					close(g.release)
					return workCall("result", id, "timeout", "10s")
				}),
				scripted.Text("done"),
			)
			agent := newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(researcher(t, child, g.tool(t)))}, mw)
			_, results := mustRun(t, agent, "go")
			st, err := sup.Status(context.Background(), mw.Owner(), id)
			if err != nil || st.State != tc.want {
				t.Fatalf("state = %v (%v), want %v; results %q", st.State, err, tc.want, results)
			}
			reqs := child.Requests()
			if tc.action == "cancel" {
				if len(reqs) != 1 {
					t.Fatalf("the cancelled child made %d model requests, want 1 (stopped at its next)", len(reqs))
				}
				if !strings.Contains(results[1], `"accepted":true`) {
					t.Fatalf("cancel receipt = %q", results[1])
				}
				return
			}
			if !strings.Contains(results[1], `"outcome":"accepted"`) {
				t.Fatalf("send receipt = %q", results[1])
			}
			if countIn(reqs[0], "focus on 2009") != 0 || countIn(reqs[1], "[supervisor guidance]") != 1 || countIn(reqs[1], "focus on 2009") != 1 {
				t.Fatalf("guidance: first request %q, second %q", reqs[0].Text(), reqs[1].Text())
			}
			if results[2] != "answer" {
				t.Fatalf("result = %q", results[2])
			}
		})
	}
}

// Any other adk.Agent is a function child: send is refused.
func TestPlainAgentIsFunctionChild(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	g := newGate()
	plain := newAgent(t, "plain", scripted.New(scripted.Call("wait_for_data", `{}`), scripted.Text("x")), []tool.BaseTool{g.tool(t)})
	var id string
	coord := scripted.New(
		scripted.Call("plain", `{"input":"task","run_in_background":true}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			id = ref(t, r.LastToolResult()).ID
			<-g.entered
			return scripted.Call("work", `{"action":"send","id":"`+id+`","message":"hi"}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			close(g.release)
			return workCall("result", id, "timeout", "10s")
		}),
		scripted.Text("done"),
	)
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(eino.FromAgent(plain))}, mw), "go")
	if !strings.Contains(results[1], `"error"`) || !strings.Contains(results[1], "not_agent") {
		t.Fatalf("send to a function child = %q, want the not_agent error object", results[1])
	}
	if results[2] != "x" {
		t.Fatalf("result = %q", results[2])
	}
}

// Budgets: when the child's turns, tokens (from the response's usage) or
// tool calls run out, its final request goes without tools and with the
// final instruction, and its answer is the output.
func TestAgentChildBudget(t *testing.T) {
	calls := func(n int) scripted.Step {
		var cs []scripted.ToolCall
		for range n {
			cs = append(cs, scripted.ToolCall{Name: "lookup", Arguments: `{}`})
		}
		return scripted.Calls(cs...)
	}
	for _, tc := range []struct {
		name      string
		budget    work.Budget
		steps     []scripted.Step
		wantFinal int // the index of the final request
		lookups   int
	}{
		{"turns", work.Budget{MaxTurns: 1}, []scripted.Step{calls(1), scripted.Text("partial")}, 1, 1},
		{"tokens", work.Budget{MaxTokens: 10}, []scripted.Step{calls(1).WithUsage(15, 5), scripted.Text("partial")}, 1, 1},
		{"tool calls", work.Budget{MaxToolCalls: 1}, []scripted.Step{calls(2), scripted.Text("partial")}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sup := newSup(t)
			mw := eino.New(sup)
			defer mw.Release()
			lookups := 0
			lookup, _ := utils.InferTool("lookup", "Looks up.", func(context.Context, struct{}) (string, error) { lookups++; return "found", nil })
			child := scripted.New(tc.steps...)
			c := eino.FromAgent(newAgent(t, "researcher", child, []tool.BaseTool{lookup}, eino.ChildMiddleware()), eino.WithBudget(tc.budget))
			coord := scripted.New(scripted.Call("researcher", `{"input":"task"}`), scripted.Text("done"))
			_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{c}, mw), "go")
			if results[0] != "partial" {
				t.Fatalf("output = %q, want the final answer", results[0])
			}
			reqs := child.Requests()
			final := reqs[tc.wantFinal]
			if len(final.Tools) != 0 || !strings.HasPrefix(final.Messages[len(final.Messages)-1].Text, "[budget] Your ") {
				t.Fatalf("final request: tools %v, last %q", toolNames(final), final.Messages[len(final.Messages)-1].Text)
			}
			if lookups != tc.lookups {
				t.Fatalf("lookups = %d, want %d", lookups, tc.lookups)
			}
		})
	}
}

// A pool refuses a start it cannot cover, before any Work exists.
func TestPool(t *testing.T) {
	mw := eino.New(newSup(t), eino.WithPool(work.Budget{MaxTurns: 2}))
	defer mw.Release()
	coord := scripted.New(scripted.Call("research", `{"input":"x","run_in_background":true}`), scripted.Text("done"))
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(echo("research", eino.WithBudget(work.Budget{MaxTurns: 5})))}, mw), "go")
	if !strings.Contains(results[0], "budget_exhausted") {
		t.Fatalf("launch over the pool = %q, want budget_exhausted", results[0])
	}
}

// A launch repeated with the provider's tool-call id gets the same
// work.ref (compose.GetToolCallID); another id starts other Work.
func TestIdempotentLaunch(t *testing.T) {
	mw := eino.New(newSup(t))
	defer mw.Release()
	launch := `{"input":"x","run_in_background":true}`
	coord := scripted.New(
		scripted.CallID("call_A", "research", launch),
		scripted.CallID("call_A", "research", launch),
		scripted.CallID("call_B", "research", launch),
		scripted.Text("done"),
	)
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(echo("research"))}, mw), "go")
	a, b, c := ref(t, results[0]), ref(t, results[1]), ref(t, results[2])
	if a.ID != b.ID || a.ID == c.ID {
		t.Fatalf("ids %s %s %s: want the first two equal, the third new", a.ID, b.ID, c.ID)
	}
}

// An agent child that declares updates gets emit_update; the application
// reads its updates.
func TestAgentChildUpdates(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	child := scripted.New(scripted.Call("emit_update", `{"value":"found three sources"}`), scripted.Text("answer"))
	c := eino.FromAgent(newAgent(t, "researcher", child, nil, eino.ChildMiddleware()), eino.WithUpdates(work.UpdatePolicy{}))
	var id string
	coord := scripted.New(
		scripted.Call("researcher", `{"input":"task","run_in_background":true}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			id = ref(t, r.LastToolResult()).ID
			return workCall("result", id, "timeout", "10s")
		}),
		scripted.Text("done"),
	)
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(c)}, mw), "go")
	if results[1] != "answer" {
		t.Fatalf("result = %q", results[1])
	}
	if got := toolNames(child.Requests()[0]); !slices.Equal(got, []string{"emit_update"}) {
		t.Fatalf("child tools = %v", got)
	}
	ups, err := sup.Updates(context.Background(), mw.Owner(), id, 0)
	if err != nil || len(ups) != 1 {
		t.Fatalf("updates = %v, %v", ups, err)
	}
	var v string
	if json.Unmarshal(ups[0].Value, &v) != nil || v != "found three sources" {
		t.Fatalf("update = %s", ups[0].Value)
	}
}

// A launch of a child that needs approval stays queued until the
// application approves it.
func TestApproval(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	coord := scripted.New(scripted.Call("publish", `{"input":"post","run_in_background":true}`), scripted.Text("done"))
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(echo("publish", eino.WithApproval(0)))}, mw), "go")
	id := ref(t, results[0]).ID
	ctx := context.Background()
	pending, err := sup.Pending(ctx, mw.Owner())
	if err != nil || len(pending) != 1 || pending[0].Work.ID != id {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if err := sup.Approve(ctx, mw.Owner(), id); err != nil {
		t.Fatal(err)
	}
	st, out, err := sup.Result(ctx, mw.Owner(), id, work.MaxResultWait)
	if err != nil || st.State != work.StateCompleted || out != "echo: post" {
		t.Fatalf("after approval: %v %q %v", st.State, out, err)
	}
}

// FromTool makes an Eino tool a child; NewAgent's agent must carry the
// child middleware.
func TestFromToolAndNewAgent(t *testing.T) {
	mw := eino.New(newSup(t))
	defer mw.Release()
	lookup, _ := utils.InferTool("lookup", "Looks up a key.", func(_ context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		return "value of " + in.Key, nil
	})
	bare := eino.NewAgent("bare", "An agent without the middleware.", func(context.Context) (adkAgent, error) {
		return newAgent(t, "bare", scripted.New(scripted.Text("x")), nil), nil
	})
	coord := scripted.New(
		scripted.Call("lookup", `{"key":"k","run_in_background":false}`),
		scripted.Call("bare", `{"input":"x"}`),
		scripted.Text("done"),
	)
	_, results := mustRun(t, newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(eino.FromTool(lookup)), bare}, mw), "go")
	if results[0] != "value of k" {
		t.Fatalf("FromTool output = %q", results[0])
	}
	if !strings.Contains(results[1], `"error"`) {
		t.Fatalf("a NewAgent child without the middleware = %q, want a failure", results[1])
	}
}

type adkAgent = adk.Agent
