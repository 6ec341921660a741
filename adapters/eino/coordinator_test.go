package eino_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// A backgroundable function child: the launch returns the work.ref at
// once, the work tool reads the exact output, the status block reaches
// the coordinator's next requests without being saved into the
// conversation.
func TestCoordinatorLaunchAndResult(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	var id string
	m := scripted.New(
		scripted.CallID("call_launch", "research", `{"input":"golang","run_in_background":true}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			id = ref(t, r.LastToolResult()).ID
			return workCall("result", id, "timeout", "5s")
		}),
		scripted.Text("done"),
	)
	agent := newAgent(t, "coordinator", m, []tool.BaseTool{eino.Backgroundable(echo("research"))}, mw)
	answer, results := mustRun(t, agent, "research golang")
	if answer != "done" {
		t.Fatalf("answer = %q", answer)
	}
	if len(results) != 2 || results[1] != "echo: golang" {
		t.Fatalf("tool results = %q, want the work.ref then the exact output", results)
	}
	r := ref(t, results[0])
	if r.TargetID != "research" || r.Guarantees.Execution != "process-local" {
		t.Fatalf("ref = %+v", r)
	}
	reqs := m.Requests()
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"research", "work"}) {
		t.Fatalf("tools = %v, want research then work", got)
	}
	if countIn(reqs[0], "[background work]") != 0 {
		t.Fatal("the first request has a status block, with no Work yet")
	}
	for i := 1; i < 3; i++ {
		if n := countIn(reqs[i], "[background work]"); n != 1 {
			t.Fatalf("request %d has %d status blocks, want exactly 1 (never saved into the conversation)", i, n)
		}
		last := reqs[i].Messages[len(reqs[i].Messages)-1]
		if !strings.HasPrefix(last.Text, "[background work] id | target") || !strings.Contains(last.Text, id) {
			t.Fatalf("request %d: the status block is not the last message: %q", i, last.Text)
		}
	}
	if strings.Contains(reqs[2].Messages[len(reqs[2].Messages)-1].Text, "echo: golang") {
		t.Fatal("the status block holds the child's output")
	}
}

// The work tool is added only when a child is backgroundable; ordinary
// tools pass through untouched.
func TestWorkToolOnlyWithBackgroundChild(t *testing.T) {
	calc, err := utils.InferTool("calc", "Adds.", func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tools []tool.BaseTool
		want  []string
	}{
		{"foreground child only", []tool.BaseTool{calc, echo("child")}, []string{"calc", "child"}},
		{"background child", []tool.BaseTool{calc, eino.Backgroundable(echo("child"))}, []string{"calc", "child", "work"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mw := eino.New(newSup(t))
			defer mw.Release()
			m := scripted.New(scripted.Text("ok"))
			mustRun(t, newAgent(t, "coordinator", m, tc.tools, mw), "hi")
			if got := toolNames(m.Requests()[0]); !slices.Equal(got, tc.want) {
				t.Fatalf("tools = %v, want %v", got, tc.want)
			}
		})
	}
}

// Preparation errors fail the run before any model call.
func TestPreparationErrors(t *testing.T) {
	authored := eino.NewFunction("work", "An authored work tool.", func(context.Context, string) (string, error) { return "", nil })
	reserved := echo("bad", eino.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"run_in_background": map[string]any{"type": "boolean"}}}))
	for _, tc := range []struct {
		name  string
		mw    func(t *testing.T) *eino.Middleware
		tools []tool.BaseTool
		want  error
	}{
		{"authored work tool", func(t *testing.T) *eino.Middleware { return eino.New(newSup(t)) },
			[]tool.BaseTool{authored, eino.Backgroundable(echo("child"))}, middleware.ErrWorkToolName},
		{"schema declares run_in_background", func(t *testing.T) *eino.Middleware { return eino.New(newSup(t)) },
			[]tool.BaseTool{eino.Backgroundable(reserved)}, middleware.ErrInvalidSchema},
		{"invalid child name", func(t *testing.T) *eino.Middleware { return eino.New(newSup(t)) },
			[]tool.BaseTool{eino.Backgroundable(echo("bad name"))}, middleware.ErrInvalidChildName},
		{"no engine", func(*testing.T) *eino.Middleware { return eino.ChildMiddleware() },
			[]tool.BaseTool{eino.Backgroundable(echo("child"))}, eino.ErrNoEngine},
		{"closed engine", func(t *testing.T) *eino.Middleware {
			sup := work.New()
			_ = sup.Close(context.Background())
			return eino.New(sup)
		}, []tool.BaseTool{eino.Backgroundable(echo("child"))}, work.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := scripted.New(scripted.Text("never"))
			_, _, err := run(context.Background(), newAgent(t, "coordinator", m, tc.tools, tc.mw(t)), "hi")
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if n := len(m.Requests()); n != 0 {
				t.Fatalf("the model got %d requests before the preparation error", n)
			}
		})
	}
}

// A foreground call returns the exact output; bad input is one error
// object and never ends the agent's run.
func TestForegroundAndBadInput(t *testing.T) {
	mw := eino.New(newSup(t))
	defer mw.Release()
	m := scripted.New(
		scripted.Call("research", `{"input":"exact"}`),
		scripted.Call("research", `{"input":7}`),
		workCall("frobnicate", ""),
		scripted.Text("done"),
	)
	answer, results := mustRun(t, newAgent(t, "coordinator", m, []tool.BaseTool{eino.Backgroundable(echo("research"))}, mw), "go")
	if answer != "done" || len(results) != 3 {
		t.Fatalf("answer %q, results %q", answer, results)
	}
	if results[0] != "echo: exact" {
		t.Fatalf("foreground output = %q", results[0])
	}
	for _, r := range results[1:] {
		if !strings.HasPrefix(r, `{"error":{"code":`) {
			t.Fatalf("bad input answered %q, want the error object", r)
		}
	}
	_ = time.Second
}

// Runs of one agent reuse its preparation: the same markers in the same
// places prepare once (the base Kit and the tools' Kit).
func TestPreparationReused(t *testing.T) {
	mw := eino.New(newSup(t))
	defer mw.Release()
	m := scripted.New(scripted.Text("1"), scripted.Text("2"), scripted.Text("3"))
	agent := newAgent(t, "coordinator", m, []tool.BaseTool{eino.Backgroundable(echo("research"))}, mw)
	for range 3 {
		mustRun(t, agent, "hi")
	}
	if n := eino.SetsForTest(mw); n != 2 {
		t.Fatalf("%d Sets after 3 runs, want 2 (prepared once)", n)
	}
}
