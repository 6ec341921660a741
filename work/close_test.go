package work_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func TestClose(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	ctxChild := func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }
	var refs []work.Ref
	for range 5 {
		ref, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if st := h.status(coord, r.ID); st.State != work.StateCancelled {
			t.Fatalf("%s after Close", st.State)
		}
	}
	_, err := h.s.Start(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild})
	if !errors.Is(err, work.ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
	wantCode(t, err, "closed")
	if evs := h.obs.ofType(observe.EventRefused); len(evs) != 1 || evs[0].ErrorClass != "closed" {
		t.Fatalf("refused = %+v", evs)
	}
	if _, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: ctxChild}); !errors.Is(err, work.ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	// Owner operations keep working; Close is idempotent.
	if l, err := h.s.List(t.Context(), coord); err != nil || len(l) != 5 {
		t.Fatalf("list = %v %v", l, err)
	}
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseRespectsContext(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent) // ignores its context until told
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error)
	go func() { errc <- h.s.Close(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v", err)
	}
	if st := h.status(coord, ref.ID); st.State != work.StateCancelRequested {
		t.Fatalf("state = %s", st.State)
	}
	c.complete("finished after close")
	if err := h.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := h.status(coord, ref.ID); st.State != work.StateCompleted {
		t.Fatalf("state = %s", st.State)
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
	for range 20 { // a select with several ready cases picks one at random
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

// TestCloseCancelsForegroundCalls: Close cancels a foreground call in
// progress and waits until its child has returned; the call yields
// ErrClosed.
func TestCloseCancelsForegroundCalls(t *testing.T) {
	s := work.New()
	entered, returned := make(chan struct{}), make(chan struct{})
	result := make(chan error, 1)
	go func() {
		_, err := s.Call(context.Background(), work.Spec{Owner: work.NewOwner("coord"), Target: work.Target{Label: "fg", Kind: work.KindAgent},
			Run: func(ctx context.Context) (string, error) {
				defer close(returned)
				close(entered)
				<-ctx.Done()
				return "", ctx.Err()
			}})
		result <- err
	}()
	<-entered
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Fatal("Close returned before the foreground child did")
	}
	if err := <-result; !errors.Is(err, work.ErrClosed) {
		t.Errorf("foreground call after Close: err = %v, want ErrClosed", err)
	}
}
