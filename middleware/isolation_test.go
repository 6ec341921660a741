package middleware_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

type privateKey struct{}

// seen is what a child observed of its context.
type seen struct {
	value       any
	callID      string
	hasDeadline bool
	err         error
	exec        bool
	workID      string
	scope       work.Owner
	input       string
}

func TestChildIsolation(t *testing.T) {
	for _, background := range []bool{false, true} {
		name := map[bool]string{false: "foreground", true: "background"}[background]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			release := make(chan struct{})
			seenc := make(chan seen, 1)
			run := func(ctx context.Context, in string) (string, error) {
				<-release // for a background child, the launch's context has ended by now
				ex, ok := work.ExecutionFrom(ctx)
				var sn seen
				sn.value, sn.callID, sn.err, sn.exec, sn.input = ctx.Value(privateKey{}), middleware.CallID(ctx), ctx.Err(), ok, in
				_, sn.hasDeadline = ctx.Deadline()
				if ok {
					sn.workID, sn.scope = ex.WorkID(), ex.Scope()
				}
				seenc <- sn
				return "done", nil
			}
			child := middleware.Child{Kind: work.KindAgent, Run: run,
				Schema: map[string]any{"type": "object", "properties": map[string]any{"topic": map[string]any{"type": "string"}}}}
			entries := map[string]any{"kid": child}
			if background {
				entries["kid"] = middleware.Backgroundable(child)
			}
			s := e.prepare("coord", entries)

			caller, cancel := context.WithTimeout(context.WithValue(context.Background(), privateKey{}, "parent secret"), time.Hour)
			caller = middleware.WithCallID(caller, "call-7")
			input := `{"topic":"go","run_in_background":` + map[bool]string{false: "false", true: "true"}[background] + `}`
			var id string
			if background {
				id = refID(t, callCtx(t, caller, tool(t, s, "kid"), input))
				cancel() // the launch's context ends; the child must not notice
				close(release)
			} else {
				go func() {
					// The foreground child runs on the calling goroutine.
					close(release)
				}()
				if out := callCtx(t, caller, tool(t, s, "kid"), input); out != "done" {
					t.Fatalf("output %s", out)
				}
				cancel()
			}
			sn := <-seenc
			if sn.value != nil {
				t.Errorf("the child saw the caller's context value %v", sn.value)
			}
			if sn.callID != "" {
				t.Errorf("the child saw the caller's tool-call id %q", sn.callID)
			}
			if sn.hasDeadline {
				t.Error("the child inherited the caller's deadline")
			}
			if background && sn.err != nil {
				t.Errorf("the caller's cancellation reached a background child: %v", sn.err)
			}
			if !sn.exec {
				t.Fatal("the child has no Execution")
			}
			if sn.input != `{"topic":"go"}` {
				t.Errorf("the child got %s, not only its declared input", sn.input)
			}
			if sn.scope.Depth() != 1 || sn.scope.ID() == "coord" || !strings.HasPrefix(sn.scope.ID(), "coord/") {
				t.Errorf("the child's scope is %q at depth %d", sn.scope.ID(), sn.scope.Depth())
			}
			if background {
				if sn.workID != id {
					t.Errorf("WorkID %q, want %q", sn.workID, id)
				}
				if out := act(t, s, map[string]string{"action": "result", "id": id}); out != "done" {
					t.Fatalf("result %s", out)
				}
			} else if sn.workID != "" {
				t.Errorf("a foreground child has WorkID %q", sn.workID)
			}
		})
	}
}

// TestChildHasNoControlAuthority: a child's own Kit (on its scope) cannot
// see or control its parent's Work, and the parent cannot see the child's.
func TestChildHasNoControlAuthority(t *testing.T) {
	e := newEnv(t)
	sibling := e.gate("", nil)
	type probe struct{ status, list, cancel string }
	probec := make(chan probe, 1)
	ids := make(chan string, 1)
	inner := e.gate("", nil)
	kid := middleware.Child{Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		own, err := middleware.Prepare(e.sup, ex.Scope(), map[string]any{
			"sub": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: inner.run}),
		})
		if err != nil {
			return "", err
		}
		// Not t's helpers: this is the child's goroutine.
		tools := own.Tools() // sub, work
		if out, _ := tools[0].Call(ctx, `{"input":"x","run_in_background":true}`); !refRE.MatchString(out) {
			return "", errBoom
		}
		id := <-ids
		w := tools[1]
		var p probe
		p.status, _ = w.Call(ctx, `{"action":"status","id":"`+id+`"}`)
		p.list, _ = w.Call(ctx, `{"action":"list"}`)
		p.cancel, _ = w.Call(ctx, `{"action":"cancel","id":"`+id+`"}`)
		probec <- p
		return "ok", nil
	}}
	s := e.prepare("coord", map[string]any{
		"kid":     middleware.Backgroundable(kid),
		"sibling": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: sibling.run}),
	})
	sib := launch(t, s, "sibling", "x")
	kidID := launch(t, s, "kid", "x")
	ids <- sib
	p := <-probec
	if p.status != notFound || p.cancel != notFound {
		t.Errorf("a child reached its parent's Work: status %s, cancel %s", p.status, p.cancel)
	}
	if strings.Contains(p.list, sib) || strings.Contains(p.list, kidID) {
		t.Errorf("a child listed its parent's Work: %s", p.list)
	}
	if out := act(t, s, map[string]string{"action": "result", "id": kidID}); out != "ok" {
		t.Fatalf("kid result %s", out)
	}
	// The parent sees only its own two Works, never the grandchild.
	var l []struct {
		TargetLabel string `json:"targetLabel"`
	}
	if err := jsonUnmarshal(act(t, s, map[string]string{"action": "list"}), &l); err != nil || len(l) != 2 {
		t.Fatalf("parent list %v %v", l, err)
	}
	for _, st := range l {
		if st.TargetLabel == "sub" {
			t.Fatal("the parent sees its child's Work")
		}
	}
}

// TestNestedDepth: a child that prepares its own Kit on its scope can launch
// background Work at depths 1..3; at the default depth limit (4) the launch
// is refused with limit_exceeded.
func TestNestedDepth(t *testing.T) {
	e := newEnv(t)
	type report struct {
		depth int
		out   string
	}
	reports := make(chan report, 8)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	var nest middleware.Child
	nest = middleware.Child{Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		own, err := middleware.Prepare(e.sup, ex.Scope(), map[string]any{"nest": middleware.Backgroundable(nest)})
		if err != nil {
			return "", err
		}
		out, err := own.Tools()[0].Call(context.Background(), `{"input":"deeper","run_in_background":true}`) // nest
		if err != nil {
			out = "go error: " + err.Error()
		}
		reports <- report{ex.Scope().Depth(), out}
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return "", ctx.Err()
	}}
	s := e.prepare("coord", map[string]any{"nest": middleware.Backgroundable(nest)})
	launch(t, s, "nest", "top") // from depth 0
	byDepth := map[int]string{}
	for range 4 { // a child may report before its parent does
		r := <-reports
		byDepth[r.depth] = r.out
	}
	for want := 1; want <= 4; want++ {
		r := report{want, byDepth[want]}
		if r.out == "" {
			t.Fatalf("no report from depth %d: %v", want, byDepth)
		}
		if want < 4 {
			refID(t, r.out) // launched
			continue
		}
		if code := errorCode(t, r.out); code != work.ErrLimit.Code {
			t.Fatalf("at the depth limit: %s", r.out)
		}
		if !strings.Contains(r.out, "depth") {
			t.Fatalf("the refusal does not name the limit: %s", r.out)
		}
	}
}
