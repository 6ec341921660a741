package langchaingo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestChildIterationsBounded: a child executor without its own iteration
// bound gets DefaultChildIterations; with langchaingo's default (5) it
// keeps it; a child that never finishes ends failed, not hung.
func TestChildIterationsBounded(t *testing.T) {
	tests := []struct {
		name  string
		exec  func(agents.Agent) *agents.Executor
		turns int
	}{
		{"unset", func(a agents.Agent) *agents.Executor { return &agents.Executor{Agent: a} }, lc.DefaultChildIterations},
		{"zero", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a, agents.WithMaxIterations(0)) }, lc.DefaultChildIterations},
		{"langchaingo default", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a) }, 5},
		{"explicit", func(a agents.Agent) *agents.Executor { return agents.NewExecutor(a, agents.WithMaxIterations(3)) }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sup := work.New()
			defer closeSup(t, sup)
			steps := make([]scripted.Step, 3*lc.DefaultChildIterations)
			for i := range steps {
				steps[i] = scripted.ReActCall("noop", "again")
			}
			s := &spy{inner: scripted.New(steps...)}
			loop := lc.FromExecutor("loop", "Never finishes.", tt.exec(agents.NewOneShotAgent(s, []tools.Tool{constTool("noop", "nothing")})))
			kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(loop)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			id := refID(callOK(t, ctx, toolNamed(t, kit.Tools(), "loop"), `{"input":"go","run_in_background":true}`), "loop")
			if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
				t.Errorf("state = %s, want failed", st)
			}
			if n := s.calls(); n != tt.turns {
				t.Errorf("model turns = %d, want %d", n, tt.turns)
			}
		})
	}
}

// TestChildMaxDuration: reaching a child's maximum duration cancels it; it
// stops at its next boundary and fails with class deadline_exceeded, in the
// background and in the foreground.
func TestChildMaxDuration(t *testing.T) {
	for _, background := range []bool{true, false} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			ctx := context.Background()
			clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			rec := &enginetest.Recorder{}
			sup := work.New(work.WithObserver(rec), work.WithClock(clock))
			defer closeSup(t, sup)
			in := make(chan struct{})
			slow := funcTool{name: "slow", desc: "Blocks until cancelled.", fn: func(ctx context.Context, _ string) (string, error) {
				close(in)
				<-ctx.Done()
				return "partial", nil // returns normally: the boundary stops the child
			}}
			s := &spy{inner: scripted.New(scripted.ReActCall("slow", "x"), scripted.ReActFinal("too late"))}
			child := lc.FromExecutor("slowpoke", "Slow.", agents.NewExecutor(agents.NewOneShotAgent(s, []tools.Tool{slow})),
				lc.WithBudget(work.Budget{MaxDuration: time.Minute}))
			kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
			if err != nil {
				t.Fatal(err)
			}
			defer kit.Release()
			tool := toolNamed(t, kit.Tools(), "slowpoke")
			if background {
				id := refID(callOK(t, ctx, tool, `{"input":"go","run_in_background":true}`), "slowpoke")
				recv(t, in, "the slow tool")
				clock.Advance(time.Minute)
				if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
					t.Fatalf("state = %s, want failed", st)
				}
				if class := eventOf(t, rec, id, observe.EventFailed).ErrorClass; class != work.ClassDeadline {
					t.Errorf("failure class = %q, want %q", class, work.ClassDeadline)
				}
			} else {
				done := make(chan string)
				go func() {
					out, _ := tool.Call(ctx, `{"input":"go"}`)
					done <- out
				}()
				recv(t, in, "the slow tool")
				clock.Advance(time.Minute)
				var out string
				select {
				case out = <-done:
				case <-time.After(guard):
					t.Fatal("foreground call did not return")
				}
				if !strings.Contains(out, `"code":"child_failed"`) || !strings.Contains(out, work.ClassDeadline) {
					t.Errorf("foreground = %s, want child_failed (deadline_exceeded)", out)
				}
				var end observe.ToolCallEnd
				for _, c := range rec.Calls() {
					if c.Call.Tool == "slowpoke" {
						end = c.End
					}
				}
				if end.ErrorClass != work.ClassDeadline {
					t.Errorf("call end = %+v, want class %s", end, work.ClassDeadline)
				}
			}
			if n := s.calls(); n != 1 {
				t.Errorf("the child's model was called %d times, want 1", n)
			}
		})
	}
}

// TestPanickingChild: a child that panics (in its body or in one of its
// tools) fails its Work with class panic; the process goes on.
func TestPanickingChild(t *testing.T) {
	ctx := context.Background()
	rec := &enginetest.Recorder{}
	sup := work.New(work.WithObserver(rec))
	defer closeSup(t, sup)
	fnChild := lc.NewFunction("boom", "Panics.", func(context.Context, string) (string, error) { panic("PANIC-VALUE") })
	bad := funcTool{name: "bad", desc: "Panics.", fn: func(context.Context, string) (string, error) { panic("PANIC-VALUE in a tool") }}
	agentChild := lc.FromExecutor("agent_boom", "Its tool panics.",
		agents.NewExecutor(agents.NewOneShotAgent(scripted.New(scripted.ReActCall("bad", "x")), []tools.Tool{bad})))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(fnChild), lc.Backgroundable(agentChild)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	for _, name := range []string{"boom", "agent_boom"} {
		id := refID(callOK(t, ctx, toolNamed(t, kit.Tools(), name), `{"input":"x","run_in_background":true}`), name)
		if st := awaitState(t, sup, kit.Owner(), id); st != work.StateFailed {
			t.Errorf("%s: state = %s, want failed", name, st)
		}
		if class := eventOf(t, rec, id, observe.EventFailed).ErrorClass; class != work.ClassPanic {
			t.Errorf("%s: class = %q, want panic", name, class)
		}
		out := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]string{"action": "result", "id": id}))
		if decode(t, out)["state"] != "failed" || strings.Contains(out, "PANIC-VALUE") {
			t.Errorf("%s: result = %s, want the failed status only", name, out)
		}
	}
}

// TestFromExecutorFreshMemory: a Conversational child with memory runs
// twice without sharing history, and its memory's configuration (here a
// custom key read by its prompt) is kept.
func TestFromExecutorFreshMemory(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	m := scripted.New(scripted.ConversationalFinal("FIRST-ANSWER"), scripted.ConversationalFinal("SECOND-ANSWER"))
	mem := memory.NewConversationBuffer(memory.WithMemoryKey("chat_log"))
	agent := agents.NewConversationalAgent(m, nil,
		agents.WithPromptSuffix("Previous conversation history:\n{{.chat_log}}\n\nNew input: {{.input}}\n\nThought:{{.agent_scratchpad}}"))
	child := lc.FromExecutor("chat", "Chats.", agents.NewExecutor(agent, agents.WithMemory(mem)))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{child})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "chat")
	if out := callOK(t, ctx, tool, "FIRST-QUESTION"); out != "FIRST-ANSWER" {
		t.Fatalf("first run = %q", out)
	}
	if out := callOK(t, ctx, tool, "SECOND-QUESTION"); out != "SECOND-ANSWER" {
		t.Fatalf("second run = %q", out)
	}
	second := m.Requests()[1].Text()
	if strings.Contains(second, "FIRST") || !strings.Contains(second, "SECOND-QUESTION") {
		t.Errorf("the second run saw the first one's history:\n%s", second)
	}
	if msgs, _ := mem.ChatHistory.Messages(ctx); len(msgs) != 0 {
		t.Errorf("the executor's own memory was written: %v", msgs)
	}
}

// TestFromTool: any existing tool becomes a backgroundable function child:
// launched with run_in_background it runs on the child's context and its
// exact output is the result; its Go error fails the Work (state only).
func TestFromTool(t *testing.T) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)
	release := make(chan struct{})
	slow := funcTool{name: "fetch_url", desc: "Fetches a URL (slow).", fn: func(ctx context.Context, in string) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if in == "bad" {
			return "", errors.New("FROMTOOL-SECRET-FAILURE")
		}
		return "fetched " + in, nil
	}}
	child := lc.FromTool(slow, lc.WithMaxResultBytes(1024))
	if child.Name() != "fetch_url" || child.Description() != "Fetches a URL (slow)." {
		t.Fatalf("child = %s / %s", child.Name(), child.Description())
	}
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	tool := toolNamed(t, kit.Tools(), "fetch_url")
	okID := wantRef(t, callOK(t, ctx, tool, `{"input":"https://go.dev","run_in_background":true}`), "fetch_url")
	badID := wantRef(t, callOK(t, ctx, tool, `{"input":"bad","run_in_background":true}`), "fetch_url")
	close(release)
	wt := workTool(t, kit.Tools())
	if got := callOK(t, ctx, wt, js(map[string]string{"action": "result", "id": okID, "timeout": "10s"})); got != "fetched https://go.dev" {
		t.Errorf("result = %q", got)
	}
	got := callOK(t, ctx, wt, js(map[string]string{"action": "result", "id": badID, "timeout": "10s"}))
	if !strings.Contains(got, `"state":"failed"`) || strings.Contains(got, "SECRET") {
		t.Errorf("failed result = %q, want the failed state without the error text", got)
	}
	// In the foreground it returns the tool's exact output.
	if got := callOK(t, ctx, tool, `{"input":"example.org"}`); got != "fetched example.org" {
		t.Errorf("foreground = %q", got)
	}
}
