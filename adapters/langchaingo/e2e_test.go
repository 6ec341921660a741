package langchaingo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// The end-to-end tests run one coordinator of each text agent kind
// (OneShot, Conversational: the model writes JSON after "Action Input:"
// and reads replies as observations), built from Prepare's Tools and
// Model, on scripted models, with children of the same kind (the
// function-calling agent is the conformance suite's, TestConformance):
//
//   - lookup_docs: an ordinary tool;
//   - summarize: a foreground child agent;
//   - research_alpha: a backgroundable child agent whose tool waits for
//     the test (alphaGate), and which is steered twice while it waits;
//   - research_beta: a backgroundable child agent whose tool waits for the
//     test (betaRelease), and which is cancelled while it waits.
//
// The coordinator's script: summarize (foreground), launch alpha, launch
// beta, send two guidance messages to alpha, cancel beta, read alpha's
// result, read beta's (cancelled) status, answer.

const (
	e2eMarker   = "COORDINATOR-PROMPT-MARKER-51c2"
	e2eTask     = "COORDINATOR-TASK-MARKER-9e07: brief me on schedulers."
	summaryOut  = "Summary: schedulers multiplex goroutines onto threads (exact)."
	alphaOut    = "Alpha report: work stealing since Go 1.1 (exact output)."
	e2eAnswer   = "Done: alpha reported; beta was cancelled."
	guideOne    = "GUIDE-ONE prefer primary sources"
	guideTwo    = "GUIDE-TWO cite release dates"
	framedGuide = "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. " +
		guideOne + "\n2. " + guideTwo
)

// coordinatorOnly lists what no child may see: the coordinator's prompt,
// task, tool names and the work tool's description.
var coordinatorOnly = []string{e2eMarker, "COORDINATOR-TASK-MARKER", "lookup_docs", "summarize", "research_alpha",
	"research_beta", "run_in_background", "Follow and control work you started", "[background work]"}

func TestEndToEndOneShot(t *testing.T)        { testEndToEnd(t, kindNamed("OneShot")) }
func TestEndToEndConversational(t *testing.T) { testEndToEnd(t, kindNamed("Conversational")) }

func testEndToEnd(t *testing.T, k agentKind) {
	ctx := context.Background()
	sup := work.New()
	defer closeSup(t, sup)

	// research_alpha: calls fetch, which waits for alphaGate; then answers.
	alphaIn, alphaGate := make(chan struct{}), make(chan struct{})
	alphaModel := scripted.New(k.childCall("fetch", "alpha query"), k.final(alphaOut))
	alphaSpy := &spy{inner: alphaModel}
	fetch := funcTool{name: "fetch", desc: "Fetches sources.", fn: func(ctx context.Context, _ string) (string, error) {
		close(alphaIn)
		select {
		case <-alphaGate:
		case <-ctx.Done():
		}
		return "fetched sources", nil
	}}
	alpha := lc.FromExecutor("research_alpha", "Researches a topic (alpha).",
		agents.NewExecutor(k.agent(alphaSpy, []tools.Tool{fetch}, ""), agents.WithMaxIterations(4)))

	// research_beta: calls crawl, which waits for betaRelease (not for its
	// context: it returns normally after the cancel); its second step must
	// never be asked for.
	betaIn, betaRelease := make(chan struct{}), make(chan struct{})
	betaModel := scripted.New(k.childCall("crawl", "beta query"), k.final("BETA-MUST-NOT-FINISH"))
	betaSpy := &spy{inner: betaModel}
	crawl := funcTool{name: "crawl", desc: "Crawls the web.", fn: func(context.Context, string) (string, error) {
		close(betaIn)
		<-betaRelease
		return "partial crawl", nil
	}}
	beta := lc.FromExecutor("research_beta", "Researches a topic (beta).",
		agents.NewExecutor(k.agent(betaSpy, []tools.Tool{crawl}, ""), agents.WithMaxIterations(4)))

	summaryModel := scripted.New(k.final(summaryOut))
	summarize := lc.FromExecutor("summarize", "Summarizes a topic.",
		agents.NewExecutor(k.agent(summaryModel, nil, ""), agents.WithMaxIterations(2)))

	log := &toolLog{}
	ref := func(target string) string {
		outs := log.outputs(target)
		if len(outs) == 0 {
			return ""
		}
		return refID(outs[len(outs)-1], target)
	}
	coordModel := scripted.New(
		k.call("summarize", `{"input":"the topic"}`),
		k.call("research_alpha", `{"input":"alpha topic","run_in_background":true}`),
		k.call("research_beta", `{"input":"beta topic","run_in_background":true}`),
		scripted.Func(func(scripted.Request) scripted.Step {
			// Steer alpha only once it is inside its tool, so the guidance
			// is for its next model request.
			if !recv(t, alphaIn, "alpha's tool") || !recv(t, betaIn, "beta's tool") {
				return scripted.Fail(fmt.Errorf("children did not start"))
			}
			return k.call("work", js(map[string]string{"action": "send", "id": ref("research_alpha"), "message": guideOne}))
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return k.call("work", js(map[string]string{"action": "send", "id": ref("research_alpha"), "message": guideTwo}))
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return k.call("work", js(map[string]string{"action": "cancel", "id": ref("research_beta")}))
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			close(betaRelease) // beta's tool returns normally after the cancel
			close(alphaGate)
			return k.call("work", js(map[string]string{"action": "result", "id": ref("research_alpha"), "timeout": "10s"}))
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return k.call("work", js(map[string]string{"action": "result", "id": ref("research_beta"), "timeout": "10s"}))
		}),
		k.final(e2eAnswer),
	)

	kit, err := lc.Prepare(ctx, sup, coordModel, []tools.Tool{
		constTool("lookup_docs", "docs"),
		summarize,
		lc.Backgroundable(alpha),
		lc.Backgroundable(beta),
	}, lc.WithOwner("coordinator-"+k.name))
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	exec := agents.NewExecutor(k.agent(kit.Model(), log.wrap(kit.Tools()), e2eMarker), agents.WithMaxIterations(12))
	answer, err := chains.Run(ctx, exec, e2eTask)
	if err != nil {
		t.Fatalf("coordinator run: %v", err)
	}
	if answer != e2eAnswer {
		t.Errorf("answer = %q, want %q", answer, e2eAnswer)
	}

	// Every tool call returned normally, and every JSON input parsed (with
	// the text agents, the model wrote it in "Action Input:").
	calls := log.all()
	if len(calls) != 8 {
		t.Fatalf("coordinator made %d tool calls, want 8: %+v", len(calls), calls)
	}
	for _, c := range calls {
		if c.err != nil || strings.Contains(c.output, `"error"`) {
			t.Errorf("%s(%s) = %q, %v; want a normal reply", c.name, c.input, c.output, c.err)
		}
	}

	// Foreground: the exact child output.
	if got := calls[0].output; got != summaryOut {
		t.Errorf("foreground summarize = %q, want %q", got, summaryOut)
	}
	// Background launch: the exact Ref JSON.
	alphaID := wantRef(t, calls[1].output, "research_alpha")
	betaID := wantRef(t, calls[2].output, "research_beta")

	// Send receipts: accepted, in order.
	for i, c := range calls[3:5] {
		r := decode(t, c.output)
		if r["workId"] != alphaID || r["outcome"] != "accepted" || r["cursor"] != fmt.Sprint(i+1) ||
			r["id"] != fmt.Sprintf("%s.%d", alphaID, i+1) || len(r) != 5 {
			t.Errorf("send %d receipt = %s", i+1, c.output)
		}
		if strings.Contains(c.output, "GUIDE") {
			t.Errorf("send receipt echoes the guidance: %s", c.output)
		}
	}
	// Cancel: accepted, cancel-requested (beta is in its tool).
	if r := decode(t, calls[5].output); r["workId"] != betaID || r["accepted"] != true || r["state"] != "cancel-requested" {
		t.Errorf("cancel receipt = %s", calls[5].output)
	}
	// Result: the exact child output.
	if got := calls[6].output; got != alphaOut {
		t.Errorf("result of alpha = %q, want %q", got, alphaOut)
	}
	// Result of cancelled work: its status, state cancelled.
	if r := decode(t, calls[7].output); r["state"] != "cancelled" || r["resultAvailable"] != false {
		t.Errorf("result of beta = %s, want the cancelled status", calls[7].output)
	}

	// Cancel stopped beta at its next model boundary: its model saw only
	// its first request, and its Work ended cancelled.
	if n := betaSpy.calls(); n != 1 {
		t.Errorf("beta's model was called %d times, want 1 (never after the cancel)", n)
	}
	if n := betaModel.Remaining(); n != 1 {
		t.Errorf("beta's script has %d steps left, want 1", n)
	}
	if st, err := sup.Status(ctx, kit.Owner(), betaID); err != nil || st.State != work.StateCancelled {
		t.Errorf("beta status = %v, %v; want cancelled", st.State, err)
	}
	if st, err := sup.Status(ctx, kit.Owner(), alphaID); err != nil || st.State != work.StateCompleted {
		t.Errorf("alpha status = %v, %v; want completed", st.State, err)
	}

	checkStatusBlocks(t, k, coordModel.Requests(), alphaID, betaID)
	checkGuidance(t, k, alphaSpy, alphaModel, betaModel, summaryModel, coordModel)

	// The children's requests hold none of the coordinator's history or
	// tools.
	for name, m := range map[string]*scripted.Model{"research_alpha": alphaModel, "research_beta": betaModel, "summarize": summaryModel} {
		own := map[string][]string{"research_alpha": {"fetch"}, "research_beta": {"crawl"}}[name]
		reqs := m.Requests()
		if len(reqs) == 0 {
			t.Errorf("%s made no request", name)
		}
		for i, req := range reqs {
			for _, n := range req.ToolNames() {
				if !slices.Contains(own, n) {
					t.Errorf("%s request %d offers tool %q, not its own", name, i, n)
				}
			}
			for _, s := range coordinatorOnly {
				if contains(req, s) {
					t.Errorf("%s request %d contains the coordinator's %q", name, i, s)
				}
			}
		}
	}

	// A foreign owner (a second Kit on the same engine) finds nothing.
	other := lc.NewFunction("other_job", "Another job.", func(context.Context, string) (string, error) { return "", nil })
	kit2, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(other)}, lc.WithOwner("intruder"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit2.Release()
	w2 := workTool(t, kit2.Tools())
	for _, in := range []map[string]string{
		{"action": "status", "id": alphaID},
		{"action": "result", "id": alphaID},
		{"action": "send", "id": alphaID, "message": "hijack"},
		{"action": "cancel", "id": alphaID},
		{"action": "detach", "id": alphaID},
		{"action": "status", "id": betaID},
	} {
		if got := callOK(t, ctx, w2, js(in)); got != `{"status":"not_found"}` {
			t.Errorf("foreign owner %v = %s, want not_found", in, got)
		}
	}
	if got := callOK(t, ctx, w2, `{"action":"list"}`); got != `[]` {
		t.Errorf("foreign owner list = %s, want []", got)
	}
	// ... and changed nothing: alpha is still the coordinator's, readable.
	if got := callOK(t, ctx, workTool(t, kit.Tools()), js(map[string]string{"action": "result", "id": alphaID})); got != alphaOut {
		t.Errorf("coordinator's result after the foreign calls = %q", got)
	}
	if coordModel.Remaining() != 0 {
		t.Errorf("coordinator's script has %d steps left", coordModel.Remaining())
	}
}

// checkStatusBlocks checks the coordinator's requests: no status block
// while it has no Work (the first two: the foreground call makes none),
// then exactly one, as the final human message, never cached, never in a
// system message, with nothing but rows; and the agent's own messages are
// untouched (the block is never carried into the next request's history).
func checkStatusBlocks(t *testing.T, k agentKind, reqs []scripted.Request, alphaID, betaID string) {
	t.Helper()
	if len(reqs) != 9 {
		t.Fatalf("coordinator made %d requests, want 9", len(reqs))
	}
	for i, req := range reqs {
		hasWork := i >= 2
		// The agent's own message count: one human prompt for the text
		// agents; system, human, and an ai/tool pair per step for
		// OpenAIFunctions.
		own := 1
		if !k.text {
			own = 2 + 2*i
		}
		want := own
		if hasWork {
			want++
		}
		if len(req.Messages) != want {
			t.Errorf("request %d has %d messages, want %d", i, len(req.Messages), want)
			continue
		}
		for j, m := range req.Messages[:own] {
			if strings.Contains(m.Text(), "[background work]") {
				t.Errorf("request %d message %d (%s) contains a status block", i, j, m.Role)
			}
		}
		if !hasWork {
			continue
		}
		last := req.LastMessage()
		text := last.Text()
		if last.Role != llms.ChatMessageTypeHuman || len(last.Parts) != 1 || last.Parts[0].Cached {
			t.Errorf("request %d: status block message = %+v, want one uncached human text part", i, last)
		}
		lines := strings.Split(text, "\n")
		if lines[0] != "[background work] id | target | state | elapsed | result" ||
			lines[len(lines)-1] != "(read results with the work tool's result action; status never includes output)" {
			t.Errorf("request %d: status block = %q", i, text)
			continue
		}
		rows := lines[1 : len(lines)-1]
		wantRows := 1
		if i >= 3 {
			wantRows = 2
		}
		if len(rows) != wantRows || !strings.Contains(text, alphaID+" | research_alpha | ") ||
			(wantRows == 2 && !strings.Contains(text, betaID+" | research_beta | ")) {
			t.Errorf("request %d: status block rows = %q", i, rows)
		}
		for _, s := range []string{alphaOut, "GUIDE", "partial crawl", "fetched"} {
			if strings.Contains(text, s) {
				t.Errorf("request %d: status block contains %q", i, s)
			}
		}
	}
	// After the cancel, beta's row shows it (cancel-requested or
	// cancelled); after alpha's result is read, alpha is completed.
	if !strings.Contains(reqs[8].LastMessage().Text(), alphaID+" | research_alpha | completed | ") {
		t.Errorf("last status block = %q, want alpha completed", reqs[8].LastMessage().Text())
	}
	if !strings.Contains(reqs[8].LastMessage().Text(), betaID+" | research_beta | cancelled | ") {
		t.Errorf("last status block = %q, want beta cancelled", reqs[8].LastMessage().Text())
	}
}

// checkGuidance checks that the two guidance messages reached alpha's next
// request, framed, in order, as its final human message, and appear
// nowhere else.
func checkGuidance(t *testing.T, k agentKind, alphaSpy *spy, alpha, beta, summary, coord *scripted.Model) {
	t.Helper()
	reqs := alpha.Requests()
	if len(reqs) != 2 || alphaSpy.calls() != 2 {
		t.Fatalf("alpha made %d requests (spy %d), want 2", len(reqs), alphaSpy.calls())
	}
	if contains(reqs[0], "GUIDE") || contains(reqs[0], "[supervisor guidance]") {
		t.Errorf("alpha's first request has guidance: %q", reqs[0].Text())
	}
	last := reqs[1].LastMessage()
	if last.Role != llms.ChatMessageTypeHuman || last.Text() != framedGuide {
		t.Errorf("alpha's second request ends in %s %q, want human %q", last.Role, last.Text(), framedGuide)
	}
	for j, m := range reqs[1].Messages[:len(reqs[1].Messages)-1] {
		if strings.Contains(m.Text(), "GUIDE") || m.Role == llms.ChatMessageTypeSystem && strings.Contains(m.Text(), "supervisor") {
			t.Errorf("alpha's second request: message %d also carries guidance: %q", j, m.Text())
		}
	}
	for name, m := range map[string]*scripted.Model{"research_beta": beta, "summarize": summary} {
		for i, req := range m.Requests() {
			if contains(req, "GUIDE") || contains(req, "[supervisor guidance]") {
				t.Errorf("%s request %d has alpha's guidance", name, i)
			}
		}
	}
	// The coordinator wrote the messages itself (its own send inputs, in
	// its scratchpad with the text agents): apart from those, they appear
	// nowhere in its requests.
	for i, req := range coord.Requests() {
		text := req.Text()
		if k.text {
			var kept []string
			for _, line := range strings.Split(text, "\n") {
				if !strings.HasPrefix(line, `Action Input: {"action":"send"`) {
					kept = append(kept, line)
				}
			}
			text = strings.Join(kept, "\n")
		}
		if strings.Contains(text, "GUIDE") || strings.Contains(text, "[supervisor guidance]") {
			t.Errorf("coordinator request %d carries the guidance: %q", i, text)
		}
	}
}
