package langchaingo_test

import (
	"context"
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
