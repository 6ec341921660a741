package enginetest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func (s *suite) guidanceOrder(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "g")
	ref, c := v.running(o, Agent, "")
	var want []string
	for i := 1; i <= 3; i++ {
		msg := "guidance " + strconv.Itoa(i)
		r, err := v.e.Send(t.Context(), o, ref.ID, "call-"+strconv.Itoa(i), msg)
		if err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		if r.WorkID != ref.ID || r.Cursor != strconv.Itoa(i) || r.ID != ref.ID+"."+strconv.Itoa(i) || r.AcceptedAt.IsZero() {
			t.Fatalf("receipt %d = %+v", i, r)
		}
		want = append(want, msg)
	}
	if got := v.boundary(c).guidance; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("boundary delivered %q, want %q", got, want)
	}
	if got := v.boundary(c).guidance; len(got) != 0 {
		t.Fatalf("second boundary delivered %q again", got)
	}
	r, err := v.e.Send(t.Context(), o, ref.ID, "call-4", "guidance 4")
	if err != nil || r.Cursor != "4" {
		t.Fatalf("Send after delivery = %+v, %v", r, err)
	}
	if got := v.boundary(c).guidance; len(got) != 1 || got[0] != "guidance 4" {
		t.Fatalf("third boundary delivered %q", got)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
}

func (s *suite) guidanceIdempotency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "gi")
	ref, c := v.running(o, Agent, "")
	r1, err := v.e.Send(t.Context(), o, ref.ID, "call-1", "once")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := v.e.Send(t.Context(), o, ref.ID, "call-1", "once")
	if err != nil || r2 != r1 {
		t.Fatalf("replayed Send = %+v, %v; want the first receipt %+v", r2, err, r1)
	}
	_, err = v.e.Send(t.Context(), o, ref.ID, "call-1", "other text")
	wantErr(t, "Send(same id, other text)", err, work.ErrConflict)
	// An empty command id is never deduplicated.
	e1, err1 := v.e.Send(t.Context(), o, ref.ID, "", "twice")
	e2, err2 := v.e.Send(t.Context(), o, ref.ID, "", "twice")
	if err1 != nil || err2 != nil || e1.Cursor == e2.Cursor {
		t.Fatalf("empty command ids: %+v %v, %+v %v", e1, err1, e2, err2)
	}
	if got := v.boundary(c).guidance; strings.Join(got, "|") != "once|twice|twice" {
		t.Fatalf("delivered %q, want once, twice, twice", got)
	}
	v.finish(c, "", nil)
	// A replay of an accepted command returns its receipt after the end
	// (until Result has returned the terminal answer).
	v.eventually("terminal Work", func() bool {
		st, err := v.e.Status(t.Context(), o, ref.ID)
		return err == nil && st.State.Terminal()
	})
	if r3, err := v.e.Send(t.Context(), o, ref.ID, "call-1", "once"); err != nil || r3 != r1 {
		t.Fatalf("replay after the end = %+v, %v", r3, err)
	}
	_, err = v.e.Send(t.Context(), o, ref.ID, "call-9", "late")
	wantErr(t, "Send(terminal)", err, work.ErrTerminal)
	v.settle(o, ref.ID)
}

func (s *suite) guidanceRefusals(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "gr")
	ref, c := v.running(o, Func, "")
	_, err := v.e.Send(t.Context(), o, ref.ID, "c", "hi")
	wantErr(t, "Send(function child)", err, work.ErrNotAgent)
	_, err = v.e.Send(t.Context(), o, ref.ID, "c", "  \n")
	wantErr(t, "Send(blank)", err, work.ErrEmptyMessage)
	_, err = v.e.Send(t.Context(), o, ref.ID, "c", strings.Repeat("m", workDefaults().MaxMessageBytes+1))
	wantErr(t, "Send(too large)", err, work.ErrMessageTooLarge)
	_, err = v.e.Send(t.Context(), o, "0123456789abcdef0123456789abcdef", "c", "hi")
	wantErr(t, "Send(unknown)", err, work.ErrNotFound)
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
}

// guidanceLimits: WithMaxMessageBytes and WithGuidanceQueue hold on every
// Engine (a durable one takes them through its WithOptions, as any limit):
// a message one byte over the bound is work.ErrMessageTooLarge; with room
// for one undelivered message, a second Send before the child's boundary
// is work.ErrMailboxFull, and the boundary then delivers the first alone.
func (s *suite) guidanceLimits(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxMessageBytes, c.MaxQueuedGuidance = 8, 1 })
	o := owner(t, "gl")
	ref, c := v.running(o, Agent, "")
	_, err := v.e.Send(t.Context(), o, ref.ID, "c0", strings.Repeat("m", 9))
	wantErr(t, "Send(9 bytes, bound 8)", err, work.ErrMessageTooLarge)
	if _, err := v.e.Send(t.Context(), o, ref.ID, "c1", "8 bytes!"); err != nil {
		t.Fatalf("Send(8 bytes, bound 8): %v", err)
	}
	_, err = v.e.Send(t.Context(), o, ref.ID, "c2", "second")
	wantErr(t, "Send(second undelivered, room for one)", err, work.ErrMailboxFull)
	if got := v.boundary(c).guidance; strings.Join(got, "|") != "8 bytes!" {
		t.Fatalf("boundary delivered %q, want the first message alone", got)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
}

// guidanceDropped: guidance its child never took is dropped as the Work
// ends: the Work's events carry a guidance-dropped event (Count 1, the one
// message left) after its attempt's usage event and before its terminal
// event, the order the in-process engine reports (usage as the run ends,
// then guidance-dropped in the terminal transition); it was accepted and
// never delivered. The child takes one boundary through
// BeginRequest (a turn: a usage to report) before the message is sent,
// and none after.
func (s *suite) guidanceDropped(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "gd")
	ref, c := v.running(o, Agent, "")
	if r := v.waitReply(v.begin(c), patience); r.err != nil || len(r.guidance) != 0 {
		t.Fatalf("boundary before the message: %v, guidance %q", r.err, r.guidance)
	}
	if _, err := v.e.Send(t.Context(), o, ref.ID, "call-1", "never taken"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	v.finish(c, "done", nil)
	if st, out := v.settle(o, ref.ID); st.State != work.StateCompleted || out != "done" {
		t.Fatalf("settled %s %q, want completed %q", st.State, out, "done")
	}
	evs := v.wantPath(ref.ID, []observe.EventType{observe.EventUsage, observe.EventGuidanceDropped, observe.EventCompleted},
		observe.EventGuidanceDelivered)
	if !hasType(evs, observe.EventGuidanceAccepted) {
		t.Errorf("Work %s: no guidance-accepted event\n%s", ref.ID, describe(evs))
	}
	for _, e := range evs {
		if e.Type == observe.EventGuidanceDropped && e.Count != 1 {
			t.Errorf("guidance-dropped event has Count %d, want 1\n%s", e.Count, describe(evs))
		}
	}
}
