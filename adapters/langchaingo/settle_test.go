package langchaingo_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// gated is a backgroundable function child that returns "out <label>"
// once its gate opens (or fails when fail is set).
type gated struct {
	gate chan struct{}
	fail bool
}

func (g *gated) tool(name string) lc.BackgroundChild {
	return lc.Backgroundable(lc.NewFunction(name, "A slow job.", func(ctx context.Context, _ string) (string, error) {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if g.fail {
			return "", errors.New("failed")
		}
		return "out " + name, nil
	}))
}

// settleEnv is a coordinator Kit with gated background children a, b, c.
type settleEnv struct {
	t     *testing.T
	sup   *work.Engine
	kit   *lc.Kit
	gates map[string]*gated
	sub   *work.Subscription // the test's own subscription, to wait for settlements
}

func newSettleEnv(t *testing.T, steps ...scripted.Step) (*settleEnv, *agents.Executor) {
	t.Helper()
	return newSettleEnvModel(t, scripted.New(steps...))
}

// newSettleEnvModel is newSettleEnv on the coordinator model m.
func newSettleEnvModel(t *testing.T, m *scripted.Model) (*settleEnv, *agents.Executor) {
	t.Helper()
	e := &settleEnv{t: t, sup: work.New(), gates: map[string]*gated{}}
	t.Cleanup(func() {
		for _, g := range e.gates {
			select {
			case <-g.gate:
			default:
				close(g.gate)
			}
		}
		closeSup(t, e.sup)
	})
	var ts []tools.Tool
	for _, name := range []string{"a", "b", "c"} {
		e.gates[name] = &gated{gate: make(chan struct{}), fail: name == "b"}
		ts = append(ts, e.gates[name].tool(name))
	}
	kit, err := lc.Prepare(context.Background(), e.sup, m, ts, lc.WithOwner("coord"))
	if err != nil {
		t.Fatal(err)
	}
	e.kit = kit
	if e.sub, err = e.sup.Subscribe(t.Context(), kit.Owner(), 0); err != nil {
		t.Fatal(err)
	}
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(6))
	return e, exec
}

// settle opens the named gates at once and waits for their notices on the
// test's subscription.
func (e *settleEnv) settle(names ...string) {
	for _, n := range names {
		close(e.gates[n].gate)
	}
	for range names {
		if _, ok := <-e.sub.C(); !ok {
			e.t.Error("test subscription closed")
			return
		}
	}
}

// id returns the Work id of the target label.
func (e *settleEnv) id(label string) string {
	list, _ := e.sup.List(context.Background(), e.kit.Owner())
	for _, st := range list {
		if st.TargetLabel == label {
			return st.Work.ID
		}
	}
	e.t.Errorf("no work for %s", label)
	return ""
}

var noticeLine = regexp.MustCompile(`background work ([0-9a-f]{32}) \(([a-z]+)\) (completed|failed): `)

// notices returns "label state" for each notice line in the run's input.
func notices(req scripted.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if strings.Contains(p.Text, lc.NoticeHeader) {
				for _, sm := range noticeLine.FindAllStringSubmatch(p.Text, -1) {
					out = append(out, sm[2]+" "+sm[3])
				}
			}
		}
	}
	return out
}

func launchAll(names ...string) scripted.Step {
	var calls []scripted.Call
	for _, n := range names {
		calls = append(calls, scripted.Call{Name: n, Arguments: js(map[string]any{"input": "x", "run_in_background": true})})
	}
	return scripted.ToolCalls(calls...)
}

// TestRunUntilSettled: Work settling while the coordinator runs, and
// several settling at once, each bring exactly one notice; a result the
// coordinator read brings none; the loop ends when nothing is live.
func TestRunUntilSettled(t *testing.T) {
	var e *settleEnv
	var seen [][]string
	e, exec := newSettleEnv(t,
		launchAll("a", "b", "c"),
		// Run 0, mid-run: c completes and is not read.
		scripted.Func(func(req scripted.Request) scripted.Step {
			e.settle("c")
			return scripted.Text("first")
		}),
		// Run 1: told about c; a and b settle together while it runs.
		scripted.Func(func(req scripted.Request) scripted.Step {
			seen = append(seen, notices(req))
			e.settle("a", "b")
			return scripted.Text("second")
		}),
		// Run 2: told about a and b at once; reads a's result.
		scripted.Func(func(req scripted.Request) scripted.Step {
			seen = append(seen, notices(req))
			return scripted.ToolCall("work", js(map[string]any{"action": "result", "id": e.id("a")}))
		}),
		scripted.Text("done"),
	)
	var answers []string
	res, err := e.kit.RunUntilSettled(context.Background(), exec, "go", lc.WithOnAnswer(func(run int, a string) {
		answers = append(answers, a)
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"c completed"}, {"a completed", "b failed"}}
	for _, s := range seen {
		slices.Sort(s)
	}
	if !slices.EqualFunc(seen, want, slices.Equal) {
		t.Fatalf("notices = %v, want %v", seen, want)
	}
	if res.Resumes != 2 || res.Notices != 3 || res.Capped || res.Answer() != "done" ||
		!slices.Equal(res.Answers, []string{"first", "second", "done"}) || !slices.Equal(answers, res.Answers) {
		t.Fatalf("result = %+v", res)
	}
}

// TestRunUntilSettledWaits: the run ends with Work live; the helper waits
// for the settlement (several at once), resumes once per batch, never
// twice for one Work, and stops at the resume cap.
func TestRunUntilSettledWaits(t *testing.T) {
	var e *settleEnv
	var seen []string
	resume := scripted.Func(func(req scripted.Request) scripted.Step {
		seen = append(seen, notices(req)...)
		return scripted.Text("resumed")
	})
	e, exec := newSettleEnv(t,
		launchAll("a", "c"),
		scripted.Func(func(scripted.Request) scripted.Step {
			// Settle both once this run has ended and the helper waits.
			go func() {
				close(e.gates["a"].gate)
				close(e.gates["c"].gate)
			}()
			return scripted.Text("first")
		}),
		resume, resume,
	)
	res, err := e.kit.RunUntilSettled(context.Background(), exec, "go")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"a completed", "c completed"}) {
		t.Fatalf("notices = %v", seen)
	}
	if res.Notices != 2 || res.Resumes < 1 || res.Resumes > 2 {
		t.Fatalf("result = %+v", res)
	}
}

// TestRunUntilSettledCapAndEnds: the resume cap stops the loop (Capped);
// a done ctx ends the wait with its error; Release ends it cleanly.
func TestRunUntilSettledCapAndEnds(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		e, exec := newSettleEnv(t, launchAll("a"), scripted.Text("first"))
		res, err := e.kit.RunUntilSettled(context.Background(), exec, "go", lc.WithMaxResumes(0))
		if err != nil || !res.Capped || res.Resumes != 0 {
			t.Fatalf("result = %+v, %v", res, err)
		}
	})
	t.Run("ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		e, exec := newSettleEnv(t, launchAll("a"), scripted.Func(func(scripted.Request) scripted.Step {
			cancel() // the helper will find ctx done while a is live
			return scripted.Text("first")
		}))
		_ = e
		_, err := e.kit.RunUntilSettled(ctx, exec, "go")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("release", func(t *testing.T) {
		var e *settleEnv
		e, exec := newSettleEnv(t, launchAll("a"), scripted.Func(func(scripted.Request) scripted.Step {
			go e.kit.Release()
			return scripted.Text("first")
		}))
		res, err := e.kit.RunUntilSettled(context.Background(), exec, "go")
		if err != nil || res.Resumes != 0 {
			t.Fatalf("result = %+v, %v", res, err)
		}
	})
}

// TestAgentChildProgress: an agent child counts its model requests and
// tool calls automatically.
func TestAgentChildProgress(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	child := lc.FromExecutor("researcher", "Researches.", agents.NewExecutor(agents.NewOpenAIFunctionsAgent(
		scripted.New(scripted.FunctionsCall("search", "q"), scripted.Text("report")),
		[]tools.Tool{constTool("search", "sources")})))
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
	if err != nil {
		t.Fatal(err)
	}
	id := wantRef(t, callOK(t, context.Background(), toolNamed(t, kit.Tools(), "researcher"), `{"input":"go","run_in_background":true}`), "researcher")
	awaitState(t, sup, kit.Owner(), id)
	st, err := sup.Status(t.Context(), kit.Owner(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress != (observe.Progress{ModelRequests: 2, ToolCalls: 1}) {
		t.Fatalf("progress = %+v", st.Progress)
	}
}

// TestRunUntilSettledFailureAfterLastRequest: a Work that fails after the
// run's last model request (so no status block showed the failure) is
// announced, once.
func TestRunUntilSettledFailureAfterLastRequest(t *testing.T) {
	var e *settleEnv
	var seen []string
	e, exec := newSettleEnv(t,
		launchAll("b"),
		scripted.Func(func(scripted.Request) scripted.Step {
			e.settle("b") // fails while the run's last request is answered
			return scripted.Text("first")
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			seen = append(seen, notices(req)...)
			return scripted.Text("done")
		}),
	)
	res, err := e.kit.RunUntilSettled(context.Background(), exec, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"b failed"}) || res.Notices != 1 || res.Resumes != 1 {
		t.Fatalf("notices = %v, result = %+v", seen, res)
	}
}

// TestRunUntilSettledBeyondList: more settled Works than List shows
// (50, as List returns at most) are all announced, each once.
func TestRunUntilSettledBeyondList(t *testing.T) {
	const n = 50 + 10
	sup := work.New(work.WithMaxOutstanding(2*n), work.WithMaxStarts(0))
	defer closeSup(t, sup)
	own, err := sup.Subscribe(t.Context(), work.NewOwner("coord"), 2*n)
	if err != nil {
		t.Fatal(err)
	}
	job := lc.Backgroundable(lc.NewFunction("job", "A job.", func(context.Context, string) (string, error) { return "ok", nil }))
	calls := make([]scripted.Call, n)
	for i := range calls {
		calls[i] = scripted.Call{Name: "job", Arguments: js(map[string]any{"input": "x", "run_in_background": true})}
	}
	ids := map[string]int{}
	m := scripted.New(
		scripted.ToolCalls(calls...),
		scripted.Func(func(scripted.Request) scripted.Step {
			for range n { // all settle before the run ends
				<-own.C()
			}
			return scripted.Text("first")
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			for _, m := range req.Messages {
				for _, p := range m.Parts {
					if strings.Contains(p.Text, lc.NoticeHeader) {
						for _, sm := range noticeLine.FindAllStringSubmatch(p.Text, -1) {
							ids[sm[1]]++
						}
					}
				}
			}
			return scripted.Text("done")
		}),
	)
	kit, err := lc.Prepare(context.Background(), sup, m, []tools.Tool{job}, lc.WithOwner("coord"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(6))
	res, err := kit.RunUntilSettled(context.Background(), exec, "go")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != n || res.Notices != n || res.Resumes != 1 {
		t.Fatalf("%d Works announced (%d notices), want %d; result %+v", len(ids), res.Notices, n, res)
	}
	for id, c := range ids {
		if c != 1 {
			t.Fatalf("work %s announced %d times", id, c)
		}
	}
}

// TestRunUntilSettledKeepsTheTask: a coordinator without memory (an
// Executor's default) remembers nothing of its first run, so it is resumed
// with its original task and the notice; one with memory gets the notice
// alone, its memory holding the task.
func TestRunUntilSettledKeepsTheTask(t *testing.T) {
	const task = "Summarize the quarterly report."
	launch := `{"input":"x","run_in_background":true}`
	tests := []struct {
		name     string
		steps    func(e *settleEnv, resumed *string) []scripted.Step
		executor func(kit *lc.Kit) *agents.Executor
		wantTask bool
	}{
		{
			name: "OneShot without memory",
			steps: func(e *settleEnv, resumed *string) []scripted.Step {
				return []scripted.Step{
					scripted.ReActCall("a", launch),
					scripted.Func(func(scripted.Request) scripted.Step {
						e.settle("a")
						return scripted.ReActFinal("started")
					}),
					scripted.Func(func(req scripted.Request) scripted.Step {
						*resumed = req.Text()
						return scripted.ReActFinal("done")
					}),
				}
			},
			executor: func(kit *lc.Kit) *agents.Executor {
				return agents.NewExecutor(agents.NewOneShotAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(6))
			},
			wantTask: true,
		},
		{
			name: "OpenAIFunctions without memory",
			steps: func(e *settleEnv, resumed *string) []scripted.Step {
				return []scripted.Step{
					scripted.ToolCall("a", launch),
					scripted.Func(func(scripted.Request) scripted.Step {
						e.settle("a")
						return scripted.Text("started")
					}),
					scripted.Func(func(req scripted.Request) scripted.Step {
						*resumed = req.Text()
						return scripted.Text("done")
					}),
				}
			},
			executor: func(kit *lc.Kit) *agents.Executor {
				return agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(6))
			},
			wantTask: true,
		},
		{
			name: "Conversational with memory",
			steps: func(e *settleEnv, resumed *string) []scripted.Step {
				return []scripted.Step{
					scripted.ConversationalCall("a", launch),
					scripted.Func(func(scripted.Request) scripted.Step {
						e.settle("a")
						return scripted.ConversationalFinal("started")
					}),
					scripted.Func(func(req scripted.Request) scripted.Step {
						*resumed = req.Text()
						return scripted.ConversationalFinal("done")
					}),
				}
			},
			executor: func(kit *lc.Kit) *agents.Executor {
				return agents.NewExecutor(agents.NewConversationalAgent(kit.Model(), kit.Tools()),
					agents.WithMaxIterations(6), agents.WithMemory(memory.NewConversationBuffer()))
			},
			wantTask: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *settleEnv
			var resumed string
			model := scripted.New()
			e, _ = newSettleEnvModel(t, model)
			model.Append(tt.steps(e, &resumed)...)
			res, err := e.kit.RunUntilSettled(context.Background(), tt.executor(e.kit), task)
			if err != nil {
				t.Fatal(err)
			}
			if res.Resumes != 1 || res.Answer() != "done" {
				t.Fatalf("result = %+v", res)
			}
			if !strings.Contains(resumed, lc.NoticeHeader) || !strings.Contains(resumed, "(a) completed") {
				t.Fatalf("the resumed request has no notice:\n%s", resumed)
			}
			if tt.wantTask {
				want := task + "\n\n" + lc.NoticeHeader
				if !strings.Contains(resumed, want) {
					t.Fatalf("the resumed request lost the task (want %q in it):\n%s", want, resumed)
				}
			} else if n := strings.Count(resumed, task); n != 1 {
				t.Fatalf("the task appears %d times in the resumed request, want once (from memory):\n%s", n, resumed)
			}
		})
	}
}
