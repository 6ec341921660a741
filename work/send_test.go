package work_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func TestSendFIFODelivery(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	var receipts []work.SendReceipt
	for i := 1; i <= 3; i++ {
		r, err := h.s.Send(coord, ref.ID, fmt.Sprintf("call-%d", i), fmt.Sprintf("msg %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Cursor != fmt.Sprint(i) || r.ID != ref.ID+"."+fmt.Sprint(i) || r.WorkID != ref.ID {
			t.Fatalf("receipt %d = %+v", i, r)
		}
		receipts = append(receipts, r)
	}
	if got := c.ex.Guidance(); fmt.Sprint(got) != "[msg 1 msg 2 msg 3]" {
		t.Fatalf("drained %q", got)
	}
	if got := c.ex.Guidance(); got != nil {
		t.Fatalf("second drain %q", got)
	}
	h.s.Send(coord, ref.ID, "call-4", "msg 4")
	if got := c.ex.Guidance(); fmt.Sprint(got) != "[msg 4]" {
		t.Fatalf("drained %q", got)
	}
	if c.ex.WorkID() != ref.ID {
		t.Fatal("WorkID")
	}
	evs := h.obs.events(ref.ID)
	var acc, del int
	for _, e := range evs {
		switch e.Type {
		case work.EventGuidanceAccepted:
			acc += e.Count
		case work.EventGuidanceDelivered:
			del += e.Count
		}
	}
	if acc != 4 || del != 4 {
		t.Fatalf("accepted %d delivered %d", acc, del)
	}
}

func TestSendToQueuedWorkIsDeliveredWhenItRuns(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(1))
	_, blocker := h.running(work.NewOwner("b"), fn)
	c := h.child()
	ref := h.start(coord, agent, c)
	if _, err := h.s.Send(coord, ref.ID, "x", "first"); err != nil {
		t.Fatal(err)
	}
	blocker.complete("")
	<-c.started
	if got := c.ex.Guidance(); fmt.Sprint(got) != "[first]" {
		t.Fatalf("drained %q", got)
	}
}

func TestSendIdempotentPerCommandID(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	r1, err := h.s.Send(coord, ref.ID, "call-1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(5)
	r2, err := h.s.Send(coord, ref.ID, "call-1", "hello")
	if err != nil || r2 != r1 {
		t.Fatalf("replay = %+v %v, want %+v", r2, err, r1)
	}
	_, err = h.s.Send(coord, ref.ID, "call-1", "hello!")
	if !errors.Is(err, work.ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	wantCode(t, err, "conflict")
	// No command id: never deduplicated.
	h.s.Send(coord, ref.ID, "", "hello")
	h.s.Send(coord, ref.ID, "", "hello")
	if got := c.ex.Guidance(); fmt.Sprint(got) != "[hello hello hello]" {
		t.Fatalf("drained %q", got)
	}
	if n := h.obs.count(work.EventGuidanceAccepted); n != 3 {
		t.Fatalf("%d accepted events", n)
	}
	// A replay after the Work ended still returns the first receipt.
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	if r3, err := h.s.Send(coord, ref.ID, "call-1", "hello"); err != nil || r3 != r1 {
		t.Fatalf("replay after end = %+v %v", r3, err)
	}
	if _, err := h.s.Send(coord, ref.ID, "call-9", "new"); !errors.Is(err, work.ErrTerminal) {
		t.Fatalf("err = %v", err)
	}
}

func TestSendRefusals(t *testing.T) {
	h := newHarness(t)
	fref, _ := h.running(coord, fn)
	_, err := h.s.Send(coord, fref.ID, "c", "hi")
	if !errors.Is(err, work.ErrNotAgent) {
		t.Fatalf("function child: %v", err)
	}
	wantCode(t, err, "not_agent")
	aref, c := h.running(coord, agent)
	for _, m := range []string{"", " ", "\n\t"} {
		_, err := h.s.Send(coord, aref.ID, "c", m)
		if !errors.Is(err, work.ErrEmptyMessage) {
			t.Fatalf("message %q: %v", m, err)
		}
	}
	c.complete("")
	h.obs.waitTerminal(aref.ID)
	_, err = h.s.Send(coord, aref.ID, "c", "late")
	wantCode(t, err, "terminal")
	if n := h.obs.count(work.EventGuidanceAccepted); n != 0 {
		t.Fatalf("%d accepted", n)
	}
}

func TestUndeliveredGuidanceDroppedAtEnd(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	h.s.Send(coord, ref.ID, "a", "one")
	h.s.Send(coord, ref.ID, "b", "two")
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	evs := h.obs.ofType(work.EventGuidanceDropped)
	if len(evs) != 1 || evs[0].Count != 2 {
		t.Fatalf("dropped = %+v", evs)
	}
	// The drop comes just before the terminal event, while the execution
	// is still open for observers.
	all := h.obs.events(ref.ID)
	if n := len(all); n < 2 || all[n-2].Type != work.EventGuidanceDropped || all[n-1].Type != work.EventCompleted {
		t.Fatalf("event order = %+v, want ... guidance-dropped, completed", all)
	}
	if got := c.ex.Guidance(); got != nil {
		t.Fatalf("drain after end = %q", got)
	}
}

func TestForegroundCall(t *testing.T) {
	h := newHarness(t, work.WithMaxDuration(0))
	out, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, ok := work.ExecutionFrom(ctx)
		if !ok || ex.WorkID() != "" || ex.Guidance() != nil || ex.Scope().Depth() != 1 {
			return "", errors.New("bad execution")
		}
		return "exact output", nil
	}})
	if err != nil || out != "exact output" {
		t.Fatalf("call = %q %v", out, err)
	}
	for _, tt := range []struct {
		name  string
		run   work.RunFunc
		class string
	}{
		{"error", func(context.Context) (string, error) { return "", errBoom }, work.ClassError},
		{"panic", func(context.Context) (string, error) { panic(canary) }, work.ClassPanic},
	} {
		_, err := h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: tt.run})
		var we *work.Error
		if !errors.As(err, &we) || we.Code != "child_failed" || we.Class != tt.class {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	// Caller cancellation.
	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	_, err = h.s.Call(ctx, work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}})
	if !errors.Is(err, work.ErrCancelled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// Completion wins over a late caller cancellation.
	ctx, cancel = context.WithCancel(t.Context())
	out, err = h.s.Call(ctx, work.Spec{Owner: coord, Target: agent, Run: func(context.Context) (string, error) {
		cancel()
		return "made it", nil
	}})
	if err != nil || out != "made it" {
		t.Fatalf("completion after cancel: %q %v", out, err)
	}
	// The child's own background Work is released when it returns.
	var inner work.Ref
	_, err = h.s.Call(t.Context(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		var err error
		inner, err = h.s.Start(ctx, work.Spec{Owner: ex.Scope(), Target: fn, Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
		return "", err
	}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := h.obs.waitTerminal(inner.ID); ev.To != work.StateCancelled {
		t.Fatalf("inner = %+v", ev)
	}
	if n := censusTotal(h.s); n != 0 {
		t.Fatalf("census = %v", census(h.s))
	}
}

func TestForegroundDeadline(t *testing.T) {
	h := newHarness(t, work.WithMaxDuration(time.Minute))
	done := make(chan error)
	go func() {
		_, err := h.s.Call(context.Background(), work.Spec{Owner: coord, Target: agent, Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
		done <- err
	}()
	h.clk.BlockUntil(1)
	h.clk.Advance(time.Minute)
	var we *work.Error
	if err := <-done; !errors.As(err, &we) || we.Class != work.ClassDeadline {
		t.Fatalf("err = %v", err)
	}
}
