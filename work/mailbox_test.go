package work_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// sendRefused checks that a Send is refused with code and left nothing
// behind: no event, and the next accepted message gets the next cursor.
func (h *harness) sendRefused(o work.Owner, id, cmd, msg, code string) {
	h.t.Helper()
	before := h.obs.count(observe.EventGuidanceAccepted)
	_, err := h.s.Send(context.Background(), o, id, cmd, msg)
	if err == nil {
		h.t.Fatalf("Send of %d bytes accepted, want %s", len(msg), code)
	}
	wantCode(h.t, err, code)
	if strings.Contains(err.Error(), canary) {
		h.t.Fatal("the error message quotes the guidance")
	}
	if n := h.obs.count(observe.EventGuidanceAccepted); n != before {
		h.t.Fatalf("a refused Send emitted %d accepted events", n-before)
	}
}

func TestSendMessageSizeLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []work.Option
		max  int
	}{
		{"default", nil, work.DefaultMaxMessageBytes},
		{"option", []work.Option{work.WithMaxMessageBytes(100)}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			ref, c := h.running(coord, agent)
			h.sendRefused(coord, ref.ID, "big", canary+strings.Repeat("x", tc.max+1-len(canary)), "message_too_large")
			_, err := h.s.Send(t.Context(), coord, ref.ID, "big", strings.Repeat("x", tc.max+1))
			if !errors.Is(err, work.ErrMessageTooLarge) {
				t.Fatal(err)
			}
			// Nothing was stored: the same command id with a message that
			// fits is new, and gets cursor 1.
			r, err := h.s.Send(t.Context(), coord, ref.ID, "big", strings.Repeat("y", tc.max))
			if err != nil || r.Cursor != "1" {
				t.Fatalf("Send at the limit = %+v %v", r, err)
			}
			if got := boundary.Guidance(c.ex); len(got) != 1 || len(got[0]) != tc.max {
				t.Fatalf("drained %d messages", len(got))
			}
		})
	}
}

func TestSendQueueLimits(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		h := newHarness(t)
		ref, c := h.running(coord, agent)
		for i := range work.DefaultMaxQueuedGuidance {
			if _, err := h.s.Send(t.Context(), coord, ref.ID, fmt.Sprint("c", i), "m"); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		h.sendRefused(coord, ref.ID, "over", canary, "mailbox_full")
		// A replay of an accepted command still gets its receipt.
		if r, err := h.s.Send(t.Context(), coord, ref.ID, "c0", "m"); err != nil || r.Cursor != "1" {
			t.Fatalf("replay while full = %+v %v", r, err)
		}
		if got := boundary.Guidance(c.ex); len(got) != work.DefaultMaxQueuedGuidance {
			t.Fatalf("drained %d", len(got))
		}
		// The refused command was not recorded: after the drain it is new.
		r, err := h.s.Send(t.Context(), coord, ref.ID, "over", canary)
		if err != nil || r.Cursor != fmt.Sprint(work.DefaultMaxQueuedGuidance+1) {
			t.Fatalf("after drain = %+v %v", r, err)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		h := newHarness(t)
		ref, c := h.running(coord, agent)
		chunk := strings.Repeat("x", work.DefaultMaxMessageBytes)
		for i := range work.DefaultMaxQueuedGuidanceBytes / work.DefaultMaxMessageBytes {
			if _, err := h.s.Send(t.Context(), coord, ref.ID, fmt.Sprint("c", i), chunk); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		h.sendRefused(coord, ref.ID, "", "y", "mailbox_full")
		boundary.Guidance(c.ex)
		if _, err := h.s.Send(t.Context(), coord, ref.ID, "", "y"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("option", func(t *testing.T) {
		h := newHarness(t, work.WithGuidanceQueue(2, 10))
		ref, _ := h.running(coord, agent)
		h.s.Send(t.Context(), coord, ref.ID, "", "12345")
		h.sendRefused(coord, ref.ID, "", "123456", "mailbox_full") // 11 bytes
		h.s.Send(t.Context(), coord, ref.ID, "", "12345")
		h.sendRefused(coord, ref.ID, "", "1", "mailbox_full") // 3 messages
	})
}

func TestSendCommandRecordWindow(t *testing.T) {
	h := newHarness(t, work.WithCommandRecords(3))
	ref, c := h.running(coord, agent)
	receipts := map[string]work.SendReceipt{}
	for _, cmd := range []string{"a", "b", "c", "d"} {
		r, err := h.s.Send(t.Context(), coord, ref.ID, cmd, "text "+cmd)
		if err != nil {
			t.Fatal(err)
		}
		receipts[cmd] = r
	}
	// "a" fell out of the window: its replay is a new command.
	if r, err := h.s.Send(t.Context(), coord, ref.ID, "a", "text a"); err != nil || r == receipts["a"] || r.Cursor != "5" {
		t.Fatalf("replay older than the window = %+v %v", r, err)
	}
	// "b" fell out too (the replay of "a" took a record); "c" and "d" are kept.
	if r, err := h.s.Send(t.Context(), coord, ref.ID, "d", "text d"); err != nil || r != receipts["d"] {
		t.Fatalf("replay within the window = %+v %v", r, err)
	}
	if _, err := h.s.Send(t.Context(), coord, ref.ID, "c", "other"); !errors.Is(err, work.ErrConflict) {
		t.Fatalf("conflict within the window: %v", err)
	}
	if r, err := h.s.Send(t.Context(), coord, ref.ID, "b", "other"); err != nil || r.Cursor != "6" {
		t.Fatalf("b after the window = %+v %v", r, err)
	}
	boundary.Guidance(c.ex)
}

// TestCommandRecordsDroppedOnceReadOrDetached: the records go once Result
// has returned the terminal answer (a replay is then new, and refused as
// terminal), and at detach.
func TestCommandRecordsDroppedOnceRead(t *testing.T) {
	h := newHarness(t)
	ref, c := h.running(coord, agent)
	r1, _ := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello")
	c.complete("out")
	h.obs.waitTerminal(ref.ID)
	// Terminal, not yet read: the replay still gets its receipt.
	if r, err := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello"); err != nil || r != r1 {
		t.Fatalf("replay before the read = %+v %v", r, err)
	}
	if _, out, err := h.s.Result(context.Background(), coord, ref.ID, 0); err != nil || out != "out" {
		t.Fatal(out, err)
	}
	if _, err := h.s.Send(t.Context(), coord, ref.ID, "call-1", "hello"); !errors.Is(err, work.ErrTerminal) {
		t.Fatalf("replay after the read: %v, want ErrTerminal", err)
	}
}
