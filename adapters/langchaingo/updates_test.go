package langchaingo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

const updateCanary = "CANARY-updates-5e2b"

// emitCall is one scripted emit_update call with tool-call id id.
func emitCall(id string, value any, question bool) scripted.Call {
	in := map[string]any{"value": value}
	if question {
		in["question"] = true
	}
	return scripted.Call{ID: id, Name: middleware.UpdateToolName, Arguments: js(in)}
}

// updatingChild is a backgroundable child agent (OpenAIFunctionsAgent) on
// its own scripted model, declaring updates.
func updatingChild(name string, m *scripted.Model, opts ...lc.ChildOption) lc.BackgroundChild {
	agent := agents.NewOpenAIFunctionsAgent(m, nil)
	return lc.Backgroundable(lc.FromExecutor(name, "A child that reports updates.", agents.NewExecutor(agent, agents.WithMaxIterations(5)), opts...))
}

// launch starts label in the background through the Kit's tool and
// returns the Work's id.
func launch(t *testing.T, ctx context.Context, kit *lc.Kit, label string) string {
	t.Helper()
	out := callOK(t, ctx, toolNamed(t, kit.Tools(), label), js(map[string]any{"input": "go", "run_in_background": true}))
	return wantRef(t, out, label)
}

// toolResults returns the tool responses of req, in order.
func toolResults(req scripted.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Kind == scripted.PartToolResponse {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// TestEmitUpdate: a child that declares updates is offered emit_update;
// accepted updates answer {"emitted":true}, a retry with the same
// tool-call id is accepted once, an update over the count is a typed
// refusal the child reads and continues past; the application reads
// them in order by cursor.
func TestEmitUpdate(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(
		scripted.ToolCalls(
			emitCall("u1", "first "+updateCanary, false),
			emitCall("u1", "first "+updateCanary, false), // the same call retried
			emitCall("u2", map[string]any{"found": 3}, false),
			emitCall("u3", "over the count", false),
		),
		scripted.Text("report"),
	)
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		updatingChild("researcher", child, lc.WithUpdates(work.UpdatePolicy{MaxUpdates: 2})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "researcher")
	st, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait)
	if err != nil || st.State != work.StateCompleted || out != "report" {
		t.Fatalf("Result = %+v, %q, %v; want completed with its report", st, out, err)
	}
	reqs := child.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child made %d requests, want 2", len(reqs))
	}
	if !slices.Contains(reqs[0].ToolNames(), middleware.UpdateToolName) {
		t.Errorf("the child was offered %v, want emit_update among them", reqs[0].ToolNames())
	}
	got := toolResults(reqs[1])
	want := []string{`{"emitted":true}`, `{"emitted":true}`, `{"emitted":true}`}
	if len(got) != 4 || !slices.Equal(got[:3], want) {
		t.Fatalf("emit_update answered %q, want three {\"emitted\":true} and a refusal", got)
	}
	refusal := decode(t, got[3])
	e, _ := refusal["error"].(map[string]any)
	if refusal["emitted"] != false || e["code"] != middleware.CodeUpdateRefused || e["reason"] != work.UpdateRefusedCount {
		t.Errorf("the update over the count answered %s, want emitted false, code update_refused, reason count", got[3])
	}
	ups, err := sup.Updates(ctx, kit.Owner(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].Seq != 1 || string(ups[0].Value) != `"first `+updateCanary+`"` || ups[0].Key != "u1" ||
		ups[1].Seq != 2 || string(ups[1].Value) != `{"found":3}` || ups[1].Key != "u2" {
		t.Errorf("Updates = %+v, want u1 and u2 in order", ups)
	}
	if after, err := sup.Updates(ctx, kit.Owner(), id, 1); err != nil || len(after) != 1 || after[0].Seq != 2 {
		t.Errorf("Updates after 1 = %+v, %v; want the second only", after, err)
	}
}

// TestEmitUpdateReserved: emit_update is reserved only for a child that
// declares updates: an authored tool of that name (in any case) fails
// Prepare then, and is an ordinary tool otherwise.
func TestEmitUpdateReserved(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	authored := constTool("Emit_Update", "mine")
	build := func(opts ...lc.ChildOption) lc.BackgroundChild {
		agent := agents.NewOpenAIFunctionsAgent(scripted.New(), []tools.Tool{authored})
		return lc.Backgroundable(lc.FromExecutor("researcher", "Researches.", agents.NewExecutor(agent), opts...))
	}
	_, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{build(lc.WithUpdates(work.UpdatePolicy{}))})
	if !errors.Is(err, middleware.ErrUpdateToolName) {
		t.Errorf("Prepare with an authored Emit_Update and WithUpdates: %v, want ErrUpdateToolName", err)
	}
	kit, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{build()})
	if err != nil {
		t.Fatalf("Prepare without WithUpdates: %v", err)
	}
	kit.Release()
	// ReportUpdates without WithUpdates, and a policy over its ceiling.
	for name, opts := range map[string][]lc.ChildOption{
		"report without updates": {lc.ReportUpdates(nil)},
		"over the ceiling":       {lc.WithUpdates(work.UpdatePolicy{MaxUpdates: work.MaxUpdatesCeiling + 1})},
		"negative":               {lc.WithUpdates(work.UpdatePolicy{MaxBytes: -1})},
	} {
		child := lc.NewFunction("fn", "A function.", func(context.Context, string) (string, error) { return "", nil }, opts...)
		if _, err := lc.Prepare(context.Background(), sup, scripted.New(), []tools.Tool{child}); !errors.Is(err, middleware.ErrInvalidChild) {
			t.Errorf("%s: Prepare = %v, want ErrInvalidChild", name, err)
		}
	}
}

// messagesWith returns the indexes of req's messages whose text contains s.
func messagesWith(req scripted.Request, s string) []int {
	var out []int
	for i, m := range req.Messages {
		if strings.Contains(m.Text(), s) {
			out = append(out, i)
		}
	}
	return out
}

// checkContentFree fails when a status block or a notice of req carries
// the canary.
func checkContentFree(t *testing.T, req scripted.Request) {
	t.Helper()
	for _, m := range req.Messages {
		text := m.Text()
		for _, header := range []string{"[background work] ", lc.NoticeHeader, lc.QuestionHeader} {
			if i := strings.Index(text, header); i >= 0 && strings.Contains(text[i:], updateCanary) && !strings.HasPrefix(text, middleware.UpdatesHeader) {
				t.Errorf("a message with %q carries update content: %q", header, text)
			}
		}
	}
}

// TestRunUntilSettledUpdates: only the child that opted in with
// ReportUpdates has its updates handed to the coordinator, filtered by its
// predicate, in a user message of its own right after the settlement
// notice, on the resume only; never in the notice or the status block.
func TestRunUntilSettledUpdates(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	alpha := scripted.New(scripted.ToolCalls(
		emitCall("a1", "keep one "+updateCanary, false),
		emitCall("a2", "skip "+updateCanary, false),
		emitCall("a3", map[string]any{"keep": 2}, false),
	), scripted.Text("alpha report"))
	beta := scripted.New(scripted.ToolCalls(emitCall("b1", "beta private "+updateCanary, false)), scripted.Text("beta report"))
	skip := func(u work.Update) bool { return !strings.Contains(string(u.Value), "skip") }
	var kit *lc.Kit
	var sub *work.Subscription
	var resumed scripted.Request
	coord := scripted.New(
		launchAll("alpha", "beta"),
		scripted.Func(func(req scripted.Request) scripted.Step {
			// Both children settle before this run ends (their results
			// stay unread: Result would mark them read).
			for settled := 0; settled < 2; {
				select {
				case n := <-sub.C():
					if n.Kind == work.NoticeSettled {
						settled++
					}
				case <-ctx.Done():
					return scripted.Fail(ctx.Err())
				}
			}
			return scripted.Text("started")
		}),
		// The resumed run calls a tool: its next request still has the
		// block right after the notice, before the tool call.
		scripted.ToolCall("work", js(map[string]any{"action": "list"})),
		scripted.Func(func(req scripted.Request) scripted.Step {
			resumed = req
			return scripted.Text("done")
		}),
	)
	kit, err := lc.Prepare(ctx, sup, coord, []tools.Tool{
		updatingChild("alpha", alpha, lc.WithUpdates(work.UpdatePolicy{}), lc.ReportUpdates(skip)),
		updatingChild("beta", beta, lc.WithUpdates(work.UpdatePolicy{})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	sub, err = sup.Subscribe(ctx, kit.Owner(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(5))
	res, err := kit.RunUntilSettled(ctx, exec, "research")
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumes != 1 || res.Notices != 2 || res.Updates != 2 || res.Questions != 0 || res.Answer() != "done" {
		t.Fatalf("RunUntilSettled = %+v, want one resume with two notices and two updates", res)
	}
	reqs := coord.Requests()
	for _, req := range reqs[:2] {
		if len(messagesWith(req, middleware.UpdatesHeader)) != 0 {
			t.Errorf("request %d of the first run carries the updates block", req.Index)
		}
	}
	for _, req := range reqs[2:] {
		blocks := messagesWith(req, middleware.UpdatesHeader)
		notices := messagesWith(req, lc.NoticeHeader)
		if len(blocks) != 1 || len(notices) != 1 || blocks[0] != notices[0]+1 {
			t.Fatalf("resumed request %d has the updates block at %v and the notice at %v of %d messages; want one block right after the notice, before the run's tool call",
				req.Index, blocks, notices, len(req.Messages))
		}
	}
	blocks := messagesWith(resumed, middleware.UpdatesHeader)
	block := resumed.Messages[blocks[0]].Text()
	if resumed.Messages[blocks[0]].Role != "human" || !strings.HasPrefix(block, middleware.UpdatesHeader) {
		t.Errorf("the updates block is not a user message of its own: %q", block)
	}
	id := refID(toolResults(reqs[1])[0], "alpha")
	wantLines := []string{
		"background work " + id + " (alpha) update 1: \"keep one " + updateCanary + "\"",
		"background work " + id + " (alpha) update 3: {\"keep\":2}",
	}
	if got := strings.Split(block, "\n")[1:]; !slices.Equal(got, wantLines) {
		t.Errorf("the block's lines are %q, want %q", got, wantLines)
	}
	if strings.Contains(block, "skip") || strings.Contains(block, "beta") {
		t.Errorf("the block carries a filtered update or a child that did not opt in: %q", block)
	}
	for _, req := range reqs {
		checkContentFree(t, req)
	}
}

// TestQuestionAnsweredBySend: a child's question resumes the coordinator
// while the child waits at its boundary; the coordinator reads it in the
// updates block and answers with the work tool's send; the answer reaches
// the child's next request as guidance.
func TestQuestionAnsweredBySend(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var childSaw string
	child := scripted.New(
		scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "Which era? " + updateCanary, "question": true})),
		scripted.Func(func(req scripted.Request) scripted.Step {
			childSaw = req.LastMessage().Text()
			return scripted.Text("report on 2012")
		}),
	)
	var asked scripted.Request
	var kit *lc.Kit
	only := func() string { // the one Work's id (a memoryless coordinator's resume has no history)
		list, _ := sup.List(ctx, kit.Owner())
		return list[0].Work.ID
	}
	coord := scripted.New(
		launchAll("asker"),
		scripted.Text("waiting"),
		scripted.Func(func(req scripted.Request) scripted.Step {
			asked = req
			return scripted.ToolCall("work", js(map[string]any{"action": "send", "id": only(), "message": "Focus on 2012."}))
		}),
		scripted.Text("answered"),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.ToolCall("work", js(map[string]any{"action": "result", "id": only(), "timeout": "10s"}))
		}),
		scripted.Text("final"),
	)
	var err error
	kit, err = lc.Prepare(ctx, sup, coord, []tools.Tool{
		updatingChild("asker", child, lc.WithUpdates(work.UpdatePolicy{QuestionTimeout: time.Minute}), lc.ReportUpdates(nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(5))
	res, err := kit.RunUntilSettled(ctx, exec, "research")
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumes != 2 || res.Questions != 1 || res.Notices != 1 || res.Answer() != "final" {
		t.Fatalf("RunUntilSettled = %+v, want a resume for the question and one for the settlement", res)
	}
	if len(messagesWith(asked, lc.QuestionHeader)) != 1 || len(messagesWith(asked, lc.NoticeHeader)) != 0 {
		t.Errorf("the question's resume has no question notice, or a settlement notice")
	}
	if b := messagesWith(asked, middleware.UpdatesHeader); len(b) != 1 || !strings.Contains(asked.Messages[b[0]].Text(), ") question 1: \"Which era? "+updateCanary+"\" (a question: answer it with the work tool's send action while the work runs)") {
		t.Errorf("the question's resume does not carry the question in its updates block")
	}
	want := "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. Focus on 2012."
	if childSaw != want {
		t.Errorf("the child's next request ends with %q, want the answer as guidance %q", childSaw, want)
	}
	for _, req := range coord.Requests() {
		checkContentFree(t, req)
	}
	last := coord.Requests()[len(coord.Requests())-2]
	if len(messagesWith(last, middleware.UpdatesHeader)) != 0 {
		t.Errorf("the settlement's resume carries the question again")
	}
}

// TestQuestionUnanswered: a question no one answers within its timeout
// lets the child's next request go on with the framed no-answer note.
func TestQuestionUnanswered(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(
		scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "Anyone?", "question": true})),
		scripted.Text("went on"),
	)
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		updatingChild("asker", child, lc.WithUpdates(work.UpdatePolicy{QuestionTimeout: 20 * time.Millisecond})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "asker")
	if st, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || out != "went on" {
		t.Fatalf("Result = %+v, %q, %v", st, out, err)
	}
	reqs := child.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child made %d requests, want 2", len(reqs))
	}
	if got := reqs[1].LastMessage(); got.Role != "human" || got.Text() != middleware.NoAnswerNote {
		t.Errorf("the child's next request ends with %q, want the no-answer note", got.Text())
	}
	if n := len(messagesWith(reqs[1], "[supervisor guidance] Your supervisor sent guidance")); n != 0 {
		t.Errorf("guidance was delivered with no answer sent")
	}
}

// TestEmitUpdateTextAgent: a text agent's prompt lists emit_update; its
// calls have no tool-call id, so the input's key makes a retry count once.
func TestEmitUpdateTextAgent(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	in := js(map[string]any{"value": "halfway", "key": "k1"})
	child := scripted.New(scripted.ReActCall("emit_update", in), scripted.ReActCall("emit_update", in), scripted.ReActFinal("done"))
	exec := agents.NewExecutor(agents.NewOneShotAgent(child, nil), agents.WithMaxIterations(4))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{
		lc.Backgroundable(lc.FromExecutor("writer", "Writes.", exec, lc.WithUpdates(work.UpdatePolicy{}))),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "writer")
	if _, out, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || out != "done" {
		t.Fatalf("Result = %q, %v", out, err)
	}
	if first := child.Requests()[0].Text(); !strings.Contains(first, "emit_update") {
		t.Errorf("the text agent's prompt does not list emit_update:\n%s", first)
	}
	ups, err := sup.Updates(ctx, kit.Owner(), id, 0)
	if err != nil || len(ups) != 1 || ups[0].Key != "k1" || string(ups[0].Value) != `"halfway"` {
		t.Errorf("Updates = %+v, %v; want one update with key k1", ups, err)
	}
}

// TestNewAgentUpdateCollision: a NewAgent child's executor is built at
// each run, so an authored emit_update fails that run.
func TestNewAgentUpdateCollision(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := lc.NewAgent("writer", "Writes.", func(context.Context) (*agents.Executor, error) {
		return agents.NewExecutor(agents.NewOpenAIFunctionsAgent(scripted.New(scripted.Text("x")), []tools.Tool{constTool("emit_update", "mine")})), nil
	}, lc.WithUpdates(work.UpdatePolicy{}))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(child)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	id := launch(t, ctx, kit, "writer")
	if st, _, err := sup.Result(ctx, kit.Owner(), id, work.MaxResultWait); err != nil || st.State != work.StateFailed {
		t.Errorf("Result = %+v, %v; want the run failed", st, err)
	}
}

// TestQuestionNotReported: the question of a child that does not report
// its updates does not resume the coordinator; the application, told by
// a NoticeUpdate, reads it by cursor and answers it with Answer; the
// child's next request gets the answer, and the coordinator is resumed
// once, for the settlement, with no updates block.
func TestQuestionNotReported(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var childSaw string
	child := scripted.New(
		scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "Which era? " + updateCanary, "question": true})),
		scripted.Func(func(req scripted.Request) scripted.Step {
			childSaw = req.LastMessage().Text()
			return scripted.Text("report")
		}),
	)
	coord := scripted.New(launchAll("asker"), scripted.Text("waiting"), scripted.Text("settled"))
	kit, err := lc.Prepare(ctx, sup, coord, []tools.Tool{
		updatingChild("asker", child, lc.WithUpdates(work.UpdatePolicy{QuestionTimeout: time.Minute})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	sub, err := sup.Subscribe(ctx, kit.Owner(), 0)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan []work.Update, 1)
	go func() { // the application
		defer close(answered)
		for n := range sub.C() {
			if n.Kind != work.NoticeUpdate {
				continue
			}
			ups, err := sup.Updates(ctx, kit.Owner(), n.WorkID, n.Seq-1)
			if err == nil && len(ups) == 1 && ups[0].Question {
				_, err = sup.Answer(ctx, kit.Owner(), n.WorkID, "app-1", "The 2012 redesign.")
			}
			if err != nil {
				t.Errorf("the application: %v", err)
			}
			answered <- ups
			return
		}
	}()
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(kit.Model(), kit.Tools()), agents.WithMaxIterations(5))
	res, err := kit.RunUntilSettled(ctx, exec, "research")
	sub.Close()
	ups := <-answered
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 1 || string(ups[0].Value) != `"Which era? `+updateCanary+`"` {
		t.Errorf("the application read %+v, want the question", ups)
	}
	if res.Resumes != 1 || res.Questions != 0 || res.Updates != 0 || res.Answer() != "settled" {
		t.Errorf("RunUntilSettled = %+v, want one resume for the settlement only", res)
	}
	if !strings.HasSuffix(childSaw, "1. The 2012 redesign.") {
		t.Errorf("the child's next request ends with %q, want the application's answer", childSaw)
	}
	for _, req := range coord.Requests() {
		if len(messagesWith(req, middleware.UpdatesHeader)) != 0 || strings.Contains(req.Text(), updateCanary) {
			t.Errorf("request %d of the coordinator carries the child's update", req.Index)
		}
	}
}

// TestEmitUpdateForeground: a foreground call has no Work to keep
// updates: emit_update refuses with not_declared and the child goes on.
func TestEmitUpdateForeground(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	child := scripted.New(scripted.ToolCall(middleware.UpdateToolName, js(map[string]any{"value": "x"})), scripted.Text("report"))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{updatingChild("researcher", child, lc.WithUpdates(work.UpdatePolicy{}))})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if out := callOK(t, ctx, toolNamed(t, kit.Tools(), "researcher"), js(map[string]any{"input": "go"})); out != "report" {
		t.Fatalf("foreground call = %q, want the report", out)
	}
	got := toolResults(child.Requests()[1])
	if len(got) != 1 || !strings.Contains(got[0], `"emitted":false`) || !strings.Contains(got[0], `"reason":"not_declared"`) {
		t.Errorf("emit_update in the foreground answered %q, want a not_declared refusal", got)
	}
}
