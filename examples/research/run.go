package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

type config struct {
	metricsAddr string
	canary      string
	// provider, when set, replaces the scripted models (tests and env).
	provider llms.Model
	// logOutput receives the slog lines (default os.Stderr).
	logOutput io.Writer
	// every is the pause between quiet repeats of the scenario while
	// /metrics is served (scripted model only; 0 serves without repeats).
	every time.Duration
	// hold makes the scripted coordinator wait, after its launches, until
	// ctx ends (to interrupt the demo mid-run and see the shutdown report).
	hold bool
	// drain is how long Shutdown lets background work finish on exit
	// before it cancels what is left (default 3 s).
	drain time.Duration
	// inspect, when set, is given the telemetry set-up after the run,
	// before it shuts down (tests read the spans and metrics through it).
	inspect func(*telemetrySetup)
}

const task = "Write a short brief on how Go's goroutine scheduler evolved, with sources."

const systemPrompt = "You coordinate research. Start slow research in the background, keep working, steer or cancel it with the work tool, and read results with the work tool's result action."

// run runs the scenario once, printing its transcript and the telemetry
// summary. With -metrics-addr it serves /metrics from the start and, after
// the first run, repeats the scenario quietly every cfg.every (scripted
// model only) so that rates and latency panels have data, until ctx ends.
func run(ctx context.Context, w io.Writer, cfg config) error {
	tel, err := setupTelemetry(ctx, cfg)
	if err != nil {
		return err
	}
	defer tel.shutdown()
	// A small outstanding limit, so the transcript shows a refused start.
	sup := work.New(work.WithObserver(tel.observer), work.WithMaxOutstanding(3))
	defer shutdown(w, sup, tel, cfg.drain)
	if cfg.provider == nil {
		cfg.provider = providerFromEnv()
	}
	stopServing, err := tel.serve(w)
	if err != nil {
		return err
	}
	defer stopServing()

	kit, err := scenario(ctx, w, cfg, sup, tel, 1)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(w, "\ninterrupted")
		return nil // a signal: the deferred Shutdown drains and reports
	}
	if err != nil {
		return err
	}
	tel.summary(w)
	if cfg.metricsAddr != "" {
		err = repeat(ctx, w, cfg, sup, tel, kit)
	}
	if cfg.inspect != nil {
		cfg.inspect(tel)
	}
	return err
}

// repeat runs the scenario quietly every cfg.every until ctx ends, keeping
// the previous run's work visible (for the gauges) until the next one ends.
func repeat(ctx context.Context, w io.Writer, cfg config, sup *work.Engine, tel *telemetrySetup, prev *lc.Kit) error {
	if cfg.every <= 0 || cfg.provider != nil {
		fmt.Fprintln(w, "serving until interrupted")
		<-ctx.Done()
		return nil
	}
	fmt.Fprintf(w, "repeating the scenario every %s until interrupted\n", cfg.every)
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	for n := 2; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		kit, err := scenario(ctx, io.Discard, cfg, sup, tel, n)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		prev.Release()
		prev = kit
	}
}

// scenario builds a coordinator (owner "coordinator", or "coordinator-n"
// for later runs) and its children, runs the task, waits until every child
// has settled (so all their spans have ended) and returns the Kit, whose
// work stays visible until the caller releases it.
func scenario(ctx context.Context, w io.Writer, cfg config, sup *work.Engine, tel *telemetrySetup, n int) (*lc.Kit, error) {
	tr := &transcript{w: w}
	d := newDemo(cfg, tr)
	d.live = cfg.provider != nil
	d.ctx, d.hold = ctx, cfg.hold
	owner := "coordinator"
	if n > 1 {
		owner = fmt.Sprintf("coordinator-%d", n)
	}
	kit, err := lc.Prepare(ctx, sup, tr.model("coordinator", d.model(cfg.provider, d.coordinatorScript()...)), []tools.Tool{
		d.wordCount(),
		d.outline(cfg.provider),
		// research_web has a budget of one model request (turn): its
		// second request is its final one, without tools, and its answer
		// is a partial result.
		// It also reports updates (two findings and a question, answered
		// by the coordinator's send; a live model that does not answer
		// lets it go on after 30 s), handed to the coordinator with its
		// next resume (ReportUpdates).
		lc.Backgroundable(d.researcher("research_web", "Researches a topic on the web and returns a short report with sources.", cfg.provider, d.webGate,
			lc.WithBudget(work.Budget{MaxTurns: 1}), lc.WithUpdates(work.UpdatePolicy{QuestionTimeout: 30 * time.Second}), lc.ReportUpdates(nil))),
		lc.Backgroundable(d.researcher("research_papers", "Researches academic papers on a topic and returns a short report.", cfg.provider, nil)),
		lc.Backgroundable(d.fetchDataset()),
		lc.Backgroundable(d.checkCitations()),
		lc.Backgroundable(d.publishBrief()),
	}, lc.WithOwner(owner))
	if err != nil {
		return nil, err
	}
	// The application's approval handler, for publish_brief.
	ap, err := d.startApprover(ctx, sup, kit.Owner())
	if err != nil {
		kit.Release()
		return nil, err
	}
	defer ap.stop()
	agent := agents.NewOpenAIFunctionsAgent(kit.Model(), tr.tools("coordinator", kit.Tools()),
		agents.NewOpenAIOption().WithSystemMessage(systemPrompt+d.plant("prompt")))
	exec := agents.NewExecutor(agent, agents.WithMaxIterations(12))

	fmt.Fprintf(w, "agentwork research demo (%s)\ntask: %s\n\n", d.mode(), task)
	runCtx, endRun := tel.startRun(ctx)
	// The coordinator runs again, with a content-free notice, whenever its
	// run ends while background work is still live and then settles.
	_, err = kit.RunUntilSettled(runCtx, exec, task+d.plant("prompt"), lc.WithOnAnswer(func(run int, answer string) {
		if run == 0 {
			fmt.Fprintf(w, "\n== answer ==\n%s\n", answer)
			return
		}
		fmt.Fprintf(w, "\n== answer after background work settled (resume %d) ==\n%s\n\n", run, answer)
	}))
	endRun()
	if err != nil {
		if ctx.Err() == nil {
			kit.Release()
		} // else interrupted: the work is left to the engine's Shutdown
		return nil, fmt.Errorf("coordinator: %w", err)
	}

	// Result wakes on settlement: afterwards every child's spans have ended.
	list, err := sup.List(ctx, kit.Owner())
	if err == nil {
		for _, st := range list {
			if _, _, err = sup.Result(ctx, kit.Owner(), st.Work.ID, work.MaxResultWait); err != nil {
				break
			}
		}
	}
	if err != nil {
		kit.Release()
		return nil, err
	}
	// The application reads each Work's updates by cursor (its own data:
	// the transcript shows them, telemetry never does).
	for _, st := range list {
		ups, err := sup.Updates(ctx, kit.Owner(), st.Work.ID, 0)
		if err != nil || len(ups) == 0 {
			continue
		}
		for _, u := range ups {
			kind := "update"
			if u.Question {
				kind = "question"
			}
			fmt.Fprintf(w, "application: %s %d of %s: %s\n", kind, u.Seq, st.TargetLabel, u.Value)
		}
	}
	for _, st := range list {
		if st.BudgetExhausted != "" && st.State == work.StateCompleted {
			fmt.Fprintf(w, "(%s's result is partial: its %s budget ran out)\n", st.TargetLabel, st.BudgetExhausted)
		}
	}
	return kit, nil
}

// demo holds the scripted models' shared state.
type demo struct {
	ctx     context.Context // the run's
	hold    bool
	canary  string
	live    bool
	tr      *transcript
	webGate chan struct{} // opened by the coordinator once it has steered research_web
	once    sync.Once
	// citeGate is opened by the coordinator's last step of its first run:
	// check_citations is then still running when that run ends.
	citeGate chan struct{}
	citeOnce sync.Once
	// searching is signalled by each researcher's search tool as it starts,
	// so the scripted coordinator steers and cancels children that are
	// mid-run (as a real model would after a few turns of its own).
	searching chan string
	// approveGate is opened once the coordinator has seen publish_brief
	// queued; approved is closed once the application has answered;
	// publishGate once the coordinator has seen it running.
	approveGate, approved, publishGate     chan struct{}
	approveOnce, approvedOnce, publishOnce sync.Once
}

func newDemo(cfg config, tr *transcript) *demo {
	return &demo{canary: cfg.canary, tr: tr, webGate: make(chan struct{}), citeGate: make(chan struct{}), searching: make(chan string, 2),
		approveGate: make(chan struct{}), approved: make(chan struct{}), publishGate: make(chan struct{})}
}

func (d *demo) mode() string {
	if d.live {
		return "live provider"
	}
	return "scripted model, no network"
}

// plant returns the canary to append to a piece of content, or "".
func (d *demo) plant(where string) string {
	if d.canary == "" {
		return ""
	}
	return " [" + where + " " + d.canary + "]"
}

// awaitSearching waits until n researchers are in their search tool, or
// 10 s at most (the script then goes on and the transcript shows it).
func (d *demo) awaitSearching(n int) {
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-d.searching:
		case <-timeout:
			return
		}
	}
}

func (d *demo) openGate() { d.once.Do(func() { close(d.webGate) }) }

func (d *demo) model(provider llms.Model, script ...scripted.Step) llms.Model {
	if provider != nil {
		return provider
	}
	return scripted.New(script...)
}

// wordCount is an ordinary tool: untouched by the middleware.
func (d *demo) wordCount() tools.Tool {
	return funcTool{name: "word_count", desc: "Counts the words in a text.", fn: func(_ context.Context, in string) (string, error) {
		return fmt.Sprint(len(strings.Fields(in))), nil
	}}
}

// outline is a foreground child agent (a OneShot agent).
func (d *demo) outline(provider llms.Model) *lc.Child {
	m := d.model(provider, scripted.ReActFinal("1. One global run queue (Go 1.0). 2. Per-P run queues with work stealing (Go 1.1). 3. Asynchronous preemption (Go 1.14)."))
	exec := agents.NewExecutor(agents.NewOneShotAgent(d.tr.model("outline", m), nil), agents.WithMaxIterations(3))
	return lc.FromExecutor("outline", "Drafts a three-point outline of a topic (runs in the foreground).", exec)
}

// researcher is a backgroundable child agent with a search tool. The web
// researcher's search waits for gate (the coordinator opens it after
// steering); the papers researcher's search runs until cancelled.
func (d *demo) researcher(name, desc string, provider llms.Model, gate chan struct{}, opts ...lc.ChildOption) *lc.Child {
	search := funcTool{name: "search", desc: "Searches for sources.", fn: func(ctx context.Context, q string) (string, error) {
		if d.live {
			return "Sources: go.dev/blog, Dmitry Vyukov's scalable scheduler design doc (2012), Go 1.14 release notes.", nil
		}
		d.searching <- name
		if gate == nil {
			<-ctx.Done() // a slow search: it stops only when the work is cancelled
			return "partial notes", nil
		}
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return "Sources: Vyukov, Scalable Go Scheduler Design Doc (2012); Go 1.1 and 1.14 release notes.", nil
	}}
	final := scripted.Func(func(req scripted.Request) scripted.Step {
		steer := ""
		if strings.Contains(req.Text(), "[supervisor guidance]") {
			steer = " As asked, it focuses on the 2012 work-stealing redesign."
		}
		return scripted.Text("Report: Go 1.0 used one global run queue; Go 1.1 (2012) introduced per-P run queues with work stealing (Vyukov's design); Go 1.14 added asynchronous preemption." + steer + d.plant("output"))
	})
	query := "history of the Go scheduler"
	var first scripted.Step
	if gate == nil {
		first = scripted.FunctionsCall("search", "work-stealing scheduler papers")
	} else {
		// research_web reports two findings and asks a question
		// (emit_update), then searches; its next model request waits for
		// the answer, which the coordinator sends as guidance.
		first = scripted.ToolCalls(
			scripted.Call{Name: "emit_update", Arguments: args(map[string]any{"value": "Found Vyukov's 2012 scheduler design doc." + d.plant("update")})},
			scripted.Call{Name: "emit_update", Arguments: args(map[string]any{"value": map[string]any{"sources": 2, "eras": []string{"Go 1.0", "Go 1.1", "Go 1.14"}}})},
			scripted.Call{Name: "emit_update", Arguments: args(map[string]any{"value": "Should I cover every era, or focus on one?", "question": true})},
			scripted.Call{Name: "search", Arguments: args(map[string]any{"__arg1": query})},
		)
	}
	m := d.model(provider, first, final)
	agent := agents.NewOpenAIFunctionsAgent(d.tr.model(name, m), []tools.Tool{d.tr.tool(name, search)})
	return lc.FromExecutor(name, desc, agents.NewExecutor(agent, agents.WithMaxIterations(4)), opts...)
}

// fetchDataset is a backgroundable function child that fails.
func (d *demo) fetchDataset() *lc.Child {
	return lc.NewFunction("fetch_dataset", "Downloads a benchmark dataset by name (a long job).",
		func(ctx context.Context, name string) (string, error) {
			if !d.live {
				// Outstanding until the coordinator has steered (so the
				// fourth start is refused), then it fails.
				select {
				case <-d.webGate:
				case <-ctx.Done():
				}
			}
			return "", errors.New("dataset mirror unreachable" + d.plant("failure"))
		})
}

var refPattern = regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([a-z_]+)"|background work ([0-9a-f]{32}) \(([a-z_]+)\)`)

// refs returns the work ids the coordinator has seen (in a work.ref or a
// completion notice), by target.
func refs(req scripted.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			for _, sm := range refPattern.FindAllStringSubmatch(p.Text, -1) {
				if sm[1] != "" {
					out[sm[2]] = sm[1]
				} else {
					out[sm[4]] = sm[3]
				}
			}
		}
	}
	return out
}

func args(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// coordinatorScript is the coordinator's scripted model: one step per
// model request.
func (d *demo) coordinatorScript() []scripted.Step {
	return []scripted.Step{
		scripted.ToolCalls(
			scripted.Call{Name: "research_web", Arguments: args(map[string]any{"input": "history of Go's scheduler" + d.plant("input"), "run_in_background": true})},
			scripted.Call{Name: "research_papers", Arguments: args(map[string]any{"input": "work-stealing schedulers", "run_in_background": true})},
			scripted.Call{Name: "fetch_dataset", Arguments: args(map[string]any{"input": "scheduler-benchmarks", "run_in_background": true})},
		),
		scripted.ToolCalls(
			scripted.Call{Name: "word_count", Arguments: args(map[string]any{"__arg1": task})},
			scripted.Call{Name: "outline", Arguments: args(map[string]any{"input": "Go scheduler"})},
			// A fourth background start: over the demo's outstanding limit of 3.
			scripted.Call{Name: "research_web", Arguments: args(map[string]any{"input": "Go 1.14 preemption", "run_in_background": true})},
		),
		scripted.Func(func(req scripted.Request) scripted.Step {
			d.awaitSearching(2)
			if d.hold {
				d.tr.printf("holding until interrupted\n")
				<-d.ctx.Done()
				return scripted.Text("interrupted")
			}
			ids := refs(req)
			return scripted.ToolCalls(
				scripted.Call{Name: "work", Arguments: args(map[string]any{"action": "send", "id": ids["research_web"], "message": "Focus on the 2012 work-stealing redesign." + d.plant("guidance")})},
				scripted.Call{Name: "work", Arguments: args(map[string]any{"action": "cancel", "id": ids["research_papers"]})},
			)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			d.openGate()
			return scripted.ToolCall("work", args(map[string]any{"action": "result", "id": refs(req)["research_web"], "timeout": "10s"}))
		}),
		// Wait for the cancelled and the failed work to settle (result
		// returns their status: failure is visible only as state), so the
		// transcript is the same on every run.
		scripted.Func(func(req scripted.Request) scripted.Step {
			ids := refs(req)
			return scripted.ToolCalls(
				scripted.Call{Name: "work", Arguments: args(map[string]any{"action": "result", "id": ids["research_papers"], "timeout": "10s"})},
				scripted.Call{Name: "work", Arguments: args(map[string]any{"action": "result", "id": ids["fetch_dataset"], "timeout": "10s"})},
			)
		}),
		scripted.ToolCalls(
			scripted.Call{Name: "work", Arguments: args(map[string]any{"action": "list"})},
			// Called in the foreground: it moves to the background by
			// itself after its bound (WithAutoBackground), with a work.ref.
			scripted.Call{Name: "check_citations", Arguments: args(map[string]any{"input": "the brief's three sources"})},
			// publish_brief needs approval: queued until the application answers.
			scripted.Call{Name: "publish_brief", Arguments: args(map[string]any{"input": "the Go scheduler brief" + d.plant("approval"), "run_in_background": true})},
		),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ToolCall("work", args(map[string]any{"action": "status", "id": refs(req)["publish_brief"]}))
		}),
		// The coordinator saw it queued: the application approves it.
		scripted.Func(func(req scripted.Request) scripted.Step {
			d.approveOnce.Do(func() { close(d.approveGate) })
			d.awaitApproved()
			return scripted.ToolCall("work", args(map[string]any{"action": "status", "id": refs(req)["publish_brief"]}))
		}),
		// It saw it running: publish_brief finishes.
		scripted.Func(func(req scripted.Request) scripted.Step {
			d.publishOnce.Do(func() { close(d.publishGate) })
			return scripted.ToolCall("work", args(map[string]any{"action": "result", "id": refs(req)["publish_brief"], "timeout": "10s"}))
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			d.citeOnce.Do(func() { close(d.citeGate) }) // finishes after this answer
			report := ""
			for _, m := range req.Messages {
				for _, p := range m.Parts {
					if strings.HasPrefix(p.Text, "Report:") {
						report = p.Text
					}
				}
			}
			return scripted.Text("Brief: " + report + " (The papers search was cancelled; the dataset fetch failed; the brief is published.)")
		}),
		// The resume: RunUntilSettled's notice names check_citations.
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ToolCall("work", args(map[string]any{"action": "result", "id": refs(req)["check_citations"], "timeout": "10s"}))
		}),
		scripted.Text("The brief stands: its citations check out."),
	}
}

// checkCitations is a backgroundable function child whose foreground
// call moves to the background by itself after citeBound (an opt-in
// departure from the crux contract: WithAutoBackground); it is still
// running when the coordinator's first run ends, and RunUntilSettled
// resumes the coordinator when it completes.
func (d *demo) checkCitations() *lc.Child {
	return lc.NewFunction("check_citations", "Checks that a brief's sources resolve (a long job).",
		func(ctx context.Context, _ string) (string, error) {
			if !d.live {
				select {
				case <-d.citeGate:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			work.ReportProgress(ctx, 3, 3)
			return "Citations: 3 of 3 sources resolve." + d.plant("output"), nil
		}, lc.WithAutoBackground(citeBound))
}

// citeBound is how long a foreground call of check_citations waits for
// its output before it returns a work.ref and goes on in the background.
const citeBound = time.Second

// funcTool is a plain langchaingo tool.
type funcTool struct {
	name, desc string
	fn         func(context.Context, string) (string, error)
}

func (t funcTool) Name() string                                        { return t.name }
func (t funcTool) Description() string                                 { return t.desc }
func (t funcTool) Call(ctx context.Context, in string) (string, error) { return t.fn(ctx, in) }
