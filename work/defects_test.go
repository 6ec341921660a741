package work_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
)

// Smaller defects of issue 9 §5, each with a test that fails without its
// fix.

// TestForegroundGoexit: a foreground child that calls runtime.Goexit
// yields child_failed (class panic), and the caller's goroutine, here the
// test's own, carries on.
func TestForegroundGoexit(t *testing.T) {
	h := newHarness(t)
	_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		runtime.Goexit()
		return "", nil
	}})
	var we *work.Error
	if !errors.As(err, &we) || we.Code != "child_failed" || we.Class != work.ClassPanic {
		t.Fatalf("Call = %v, want child_failed (panic)", err)
	}
	// The Supervisor is not left waiting for the call.
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestCloseTimeoutLeaksNoGoroutine: every Close that gives up on its
// context leaves no goroutine behind, however often it is called.
func TestCloseTimeoutLeaksNoGoroutine(t *testing.T) {
	h := newHarness(t)
	_, c := h.running(coord, agent) // ignores its context until told
	before := goleak.IgnoreCurrent()
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		if err := h.s.Close(expired); !errors.Is(err, context.Canceled) {
			t.Fatalf("Close = %v", err)
		}
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("Close left goroutines behind: %v", err)
	}
	c.complete("")
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatalf("Close once the child returns = %v", err)
	}
}

// TestIdleCloseWithExpiredContext: with nothing running, Close returns nil
// even when its context has already ended.
func TestIdleCloseWithExpiredContext(t *testing.T) {
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 { // the old select picked either ready case at random
		if err := work.New().Close(expired); err != nil {
			t.Fatalf("idle Close = %v", err)
		}
	}
	s := work.New()
	ref, err := s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: immediate("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Result(t.Context(), coord, ref.ID, work.MaxResultWait); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := s.Close(expired); err != nil {
			t.Fatalf("Close after the work ended = %v", err)
		}
	}
}

// TestForgedScopeOwnerRefused: a top-level owner id with "/" is refused by
// every operation, so "owner/<workId>" never reaches that child's scope.
func TestForgedScopeOwnerRefused(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	inner, _ := h.running(c.ex.Scope(), agent)
	forged := work.NewOwner(coord.ID() + "/" + ref.ID)
	if forged.ID() != c.ex.Scope().ID() {
		t.Fatalf("forged id %q is not the scope's %q", forged.ID(), c.ex.Scope().ID())
	}
	refused := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, work.ErrInvalidOwner) {
			t.Errorf("%s: err = %v, want invalid_owner", name, err)
		}
	}
	_, err := h.s.Status(forged, inner.ID)
	refused("Status", err)
	_, err = h.s.List(forged)
	refused("List", err)
	_, _, err = h.s.Result(t.Context(), forged, inner.ID, 0)
	refused("Result", err)
	_, err = h.s.Send(forged, inner.ID, "c", "steer")
	refused("Send", err)
	_, err = h.s.Cancel(forged, inner.ID)
	refused("Cancel", err)
	_, err = h.s.Detach(forged, inner.ID)
	refused("Detach", err)
	if rows, more := h.s.Rows(forged); rows != nil || more != 0 {
		t.Errorf("Rows = %v, %d", rows, more)
	}
	h.s.Release(forged)
	if st := h.status(c.ex.Scope(), inner.ID); st.State != work.StateRunning {
		t.Fatalf("inner Work after the forged calls: %s", st.State)
	}
}

// TestRetentionEvictionOrder: beyond the count bound, read results go
// first, then failed and cancelled Work, and unread results last.
func TestRetentionEvictionOrder(t *testing.T) {
	h := newHarness(t, work.WithRetention(3, 0))
	finish := func(how string) string {
		ref, c := h.running(coord, agent)
		switch how {
		case "fail":
			c.fail()
		case "cancel":
			h.s.Cancel(coord, ref.ID)
			c.returnCtxErr()
		default:
			c.complete(how)
		}
		h.obs.waitTerminal(ref.ID)
		if how == "read" {
			if _, _, err := h.s.Result(t.Context(), coord, ref.ID, 0); err != nil {
				t.Fatal(err)
			}
		}
		return ref.ID
	}
	kept := func(want ...string) {
		t.Helper()
		l, _ := h.s.List(coord)
		got := map[string]bool{}
		for _, st := range l {
			got[st.Work.ID] = true
		}
		if len(got) != len(want) {
			t.Fatalf("%d kept, want %d", len(got), len(want))
		}
		for _, id := range want {
			if !got[id] {
				t.Fatalf("%s was evicted; kept %v", id, got)
			}
		}
	}
	u1 := finish("unread")
	f := finish("fail")
	finish("read")
	u2 := finish("unread")
	kept(u1, f, u2) // the read result went, though it finished after u1 and f
	x := finish("cancel")
	kept(u1, u2, x) // then the failed one
	u3 := finish("unread")
	kept(u1, u2, u3) // then the cancelled one
	u4 := finish("unread")
	kept(u2, u3, u4) // unread results last, oldest first
}
