package eino_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/middleware"
)

// RunUntilSettled resumes an idle coordinator when its background Work
// settles, with a content-free notice and the conversation so far.
func TestRunUntilSettled(t *testing.T) {
	sup := newSup(t)
	mw := eino.New(sup)
	defer mw.Release()
	release := make(chan struct{})
	slow := eino.NewFunction("research", "Researches.", func(ctx context.Context, in string) (string, error) {
		<-release
		return "SECRET finding", nil
	})
	var id string
	coord := scripted.New(
		scripted.Call("research", `{"input":"x","run_in_background":true}`),
		scripted.Func(func(r scripted.Request) scripted.Step {
			id = ref(t, r.LastToolResult()).ID
			close(release)
			return scripted.Text("started")
		}),
		scripted.Func(func(r scripted.Request) scripted.Step { return workCall("result", id) }),
		scripted.Text("final answer"),
	)
	agent := newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(slow)}, mw)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := mw.RunUntilSettled(ctx, agent, "research x")
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumes != 1 || res.Notices != 1 || res.Answer() != "final answer" {
		t.Fatalf("settled = %+v", res)
	}
	reqs := coord.Requests()
	resumed := reqs[2]
	notice := ""
	for _, m := range resumed.Messages {
		if strings.HasPrefix(m.Text, middleware.NoticeHeader) {
			notice = m.Text
		}
	}
	if !strings.Contains(notice, id+" (research) completed") || strings.Contains(notice, "SECRET") {
		t.Fatalf("notice = %q", notice)
	}
	if countIn(resumed, "research x") != 1 || countIn(resumed, "started") != 1 {
		t.Fatalf("the resumed run lost the conversation: %q", resumed.Text())
	}
	if reqs[3].LastToolResult() != "SECRET finding" {
		t.Fatalf("result = %q", reqs[3].LastToolResult())
	}
}

// Misuse is a stable error.
func TestRunUntilSettledMisuse(t *testing.T) {
	agent := newAgent(t, "a", scripted.New(), nil)
	if _, err := eino.ChildMiddleware().RunUntilSettled(context.Background(), agent, "x"); !errors.Is(err, eino.ErrNotPrepared) {
		t.Fatalf("no engine: %v", err)
	}
	mw := eino.New(newSup(t))
	if err := mw.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := mw.RunUntilSettled(context.Background(), agent, "x"); !errors.Is(err, eino.ErrReleased) {
		t.Fatalf("after Release: %v", err)
	}
	if err := mw.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}
