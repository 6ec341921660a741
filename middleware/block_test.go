package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

const (
	blockHeader = "[background work] id | target | state | elapsed | result\n"
	blockFooter = "(read results with the work tool's result action; status never includes output)"
)

func TestStatusBlockEmpty(t *testing.T) {
	e := newEnv(t)
	g := e.gate("x", nil)
	s := e.prepare("coord", map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	if got := s.StatusBlock(context.Background()); got != "" {
		t.Fatalf("no work: %q", got)
	}
	// Another owner's Work does not show.
	other := e.prepare("other", map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
	id := launch(t, other, "research", "x")
	if got := s.StatusBlock(context.Background()); got != "" {
		t.Fatalf("another owner's work: %q", got)
	}
	// Detached Work does not show.
	act(t, other, map[string]string{"action": "detach", "id": id})
	if got := other.StatusBlock(context.Background()); got != "" {
		t.Fatalf("detached work: %q", got)
	}
	for _, ev := range e.obs.Events() {
		if ev.Type == observe.EventStatusBlock {
			t.Fatalf("an empty block was reported: %+v", ev)
		}
	}
}

// TestStatusBlockPriority: results not yet read, failed, running and
// cancel-requested, queued, then the rest; newest first within each.
func TestStatusBlockPriority(t *testing.T) {
	e := newEnv(t, work.WithMaxRunning(2))
	gates := map[string]*gate{}
	entries := map[string]any{}
	for _, label := range []string{"read", "done", "failed", "cancelled", "run1", "run2", "queued"} {
		var err error
		if label == "failed" {
			err = errBoom
		}
		g := e.gate("out", err)
		g.cooperative = label == "cancelled"
		gates[label] = g
		entries[label] = middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})
	}
	s := e.prepare("coord", entries)
	ids := map[string]string{}
	finish := func(label string, after time.Duration, ev observe.EventType) {
		ids[label] = launch(t, s, label, "x")
		<-gates[label].started
		e.clock.Advance(after)
		if label == "cancelled" {
			act(t, s, map[string]string{"action": "cancel", "id": ids[label]})
		} else {
			gates[label].open()
		}
		e.obs.wait(ids[label], ev)
	}
	finish("read", 1*time.Second, observe.EventCompleted)
	if out := act(t, s, map[string]string{"action": "result", "id": ids["read"]}); out != "out" {
		t.Fatal(out)
	}
	finish("done", 2*time.Second, observe.EventCompleted)
	finish("failed", 3*time.Second, observe.EventFailed)
	finish("cancelled", 4*time.Second, observe.EventCancelled)
	ids["run1"] = launch(t, s, "run1", "x")
	e.clock.Advance(5 * time.Second)
	ids["run2"] = launch(t, s, "run2", "x")
	act(t, s, map[string]string{"action": "cancel", "id": ids["run2"]}) // ignores it: cancel-requested
	e.clock.Advance(5 * time.Second)
	ids["queued"] = launch(t, s, "queued", "x")
	e.clock.Advance(65 * time.Second)

	want := blockHeader +
		"<done> | done | completed | 2s | available\n" +
		"<failed> | failed | failed | 3s | none\n" +
		"<run2> | run2 | cancel-requested | 1m10s | none\n" +
		"<run1> | run1 | running | 1m15s | none\n" +
		"<queued> | queued | queued | 1m5s | none\n" +
		"<cancelled> | cancelled | cancelled | 4s | none\n" +
		"<read> | read | completed | 1s | available\n" +
		blockFooter
	ph := map[string]string{}
	for label, id := range ids {
		ph[id] = "<" + label + ">"
	}
	if got := subst(s.StatusBlock(context.Background()), ph); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	var blocks []observe.Event
	for _, ev := range e.obs.Events() {
		if ev.Type == observe.EventStatusBlock {
			blocks = append(blocks, ev)
		}
	}
	if len(blocks) != 1 || blocks[0].Count != 7 || blocks[0].Owner != "coord" || !blocks[0].Time.Equal(t0.Add(85*time.Second)) {
		t.Fatalf("status-block events %+v", blocks)
	}
}

func TestStatusBlockCap(t *testing.T) {
	for _, n := range []int{12, 13, 14, 40} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t, work.WithMaxRunning(100), work.WithMaxOutstanding(100))
			g := e.gate("", nil)
			s := e.prepare("coord", map[string]any{"research": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: g.run})})
			var ids []string
			for i := 0; i < n; i++ {
				ids = append(ids, launch(t, s, "research", "x"))
				e.clock.Advance(time.Second)
			}
			want := blockHeader
			for i := n - 1; i >= n-12; i-- { // newest first
				want += fmt.Sprintf("%s | research | running | %s | none\n", ids[i], time.Duration(n-i)*time.Second)
			}
			if n > 12 {
				want += fmt.Sprintf("and %d more\n", n-12)
			}
			want += blockFooter
			if got := s.StatusBlock(context.Background()); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestGuidance(t *testing.T) {
	if got := middleware.Guidance(context.Background()); got != "" {
		t.Fatalf("outside a child: %q", got)
	}
	e := newEnv(t)
	boundary := make(chan struct{})
	got := make(chan string)
	stop := make(chan struct{})
	agent := func(ctx context.Context, _ string) (string, error) {
		for {
			select {
			case <-boundary:
				got <- middleware.Guidance(ctx)
			case <-stop:
				return "done", nil
			}
		}
	}
	fgGuidance := make(chan string, 1)
	s := e.prepare("coord", map[string]any{
		"agent": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: agent}),
		"fg": middleware.Child{Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			fgGuidance <- middleware.Guidance(ctx)
			return "", nil
		}},
	})
	id := launch(t, s, "agent", "x")
	at := func() string { boundary <- struct{}{}; return <-got }
	if g := at(); g != "" {
		t.Fatalf("no guidance yet: %q", g)
	}
	act(t, s, map[string]string{"action": "send", "id": id, "message": "first"})
	act(t, s, map[string]string{"action": "send", "id": id, "message": "second\nline"})
	want := "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. first\n2. second\nline"
	if g := at(); g != want {
		t.Fatalf("got %q, want %q", g, want)
	}
	if g := at(); g != "" {
		t.Fatalf("not drained: %q", g)
	}
	act(t, s, map[string]string{"action": "send", "id": id, "message": "third"})
	if g := at(); g != "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. third" {
		t.Fatalf("got %q", g)
	}
	close(stop)
	if out := act(t, s, map[string]string{"action": "result", "id": id}); out != "done" {
		t.Fatal(out)
	}
	var delivered []int
	for _, ev := range e.obs.Events() {
		if ev.Type == observe.EventGuidanceDelivered {
			delivered = append(delivered, ev.Count)
		}
	}
	if fmt.Sprint(delivered) != "[2 1]" {
		t.Fatalf("delivered events %v", delivered)
	}
	// A foreground child has no mailbox.
	call(t, tool(t, s, "fg"), "x")
	if g := <-fgGuidance; g != "" {
		t.Fatalf("foreground guidance %q", g)
	}
	if strings.Contains(fmt.Sprintf("%+v", e.obs.Events()), "first") {
		t.Fatal("guidance text reached the observer")
	}
}
