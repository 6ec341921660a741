package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/components/tool"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestOwnerInUse: one live coordinator per WithOwner id per engine
// (middleware.ClaimOwner, shared with the langchaingo adapter): a second
// Middleware's run fails before any model request while the first is
// live, runs after the first's Release, and a Release of a Middleware
// that never ran leaves the live one's Work alone.
func TestOwnerInUse(t *testing.T) {
	sup := newSup(t)
	hold := eino.NewFunction("hold", "Holds.", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	agentOf := func(mw *eino.Middleware, m *scripted.Model) func() (string, error) {
		a := newAgent(t, "coordinator", m, []tool.BaseTool{eino.Backgroundable(hold)}, mw)
		return func() (string, error) {
			answer, _, err := run(t.Context(), a, "go")
			return answer, err
		}
	}
	first := eino.New(sup, eino.WithOwner("coord"))
	launch := scripted.New(scripted.Call("hold", `{"input":"x","run_in_background":true}`), scripted.Text("launched"))
	if _, err := agentOf(first, launch)(); err != nil {
		t.Fatal(err)
	}
	l, err := sup.List(t.Context(), first.Owner())
	if err != nil || len(l) != 1 {
		t.Fatalf("the first coordinator's Work: %v, %v", l, err)
	}
	id := l[0].Work.ID

	second := eino.New(sup, eino.WithOwner("coord"))
	idle := scripted.New(scripted.Text("unused"))
	if _, err := agentOf(second, idle)(); !errors.Is(err, middleware.ErrOwnerInUse) {
		t.Fatalf("the second coordinator's run: err = %v, want ErrOwnerInUse", err)
	}
	if n := len(idle.Requests()); n != 0 {
		t.Fatalf("the refused run made %d model requests", n)
	}
	never := eino.New(sup, eino.WithOwner("coord"))
	if err := never.Release(); !errors.Is(err, middleware.ErrOwnerInUse) {
		t.Fatalf("Release of a Middleware that never ran, its id live elsewhere: err = %v, want ErrOwnerInUse", err)
	}
	if st, err := sup.Status(t.Context(), first.Owner(), id); err != nil || st.State != work.StateRunning {
		t.Fatalf("the live coordinator's Work = %+v, %v; want running", st, err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := agentOf(second, idle)(); err != nil {
		t.Fatalf("the second coordinator's run after the first's Release: %v", err)
	}
	if err := second.Release(); err != nil {
		t.Fatal(err)
	}
}
