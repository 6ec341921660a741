package enginetest

import (
	"errors"
	"testing"

	"github.com/agentwork/agentwork/work"
)

// retentionOrder: beyond Config.Retain terminal Works per owner, results
// already read are evicted first, then failed and cancelled Work, and
// unread completed results last, each group oldest settled first
// (work.WithRetention's order, the same on every engine).
func (s *suite) retentionOrder(t *testing.T) {
	v := s.env(t, func(c *Config) { c.Retain = 3 })
	o := owner(t, "retain")
	terminal := func(id string) {
		v.eventually("Work "+id+" settles", func() bool {
			st, err := v.e.Status(v.ctx, o, id)
			return err == nil && st.State.Terminal()
		})
	}
	finish := func(how string) string {
		t.Helper()
		switch how {
		case "fail":
			ref, c := v.running(o, Func, "")
			v.finish(c, "", errors.New("enginetest: failed on purpose"))
			terminal(ref.ID)
			return ref.ID
		case "cancel":
			ref, _ := v.running(o, Func, "")
			if _, err := v.e.Cancel(v.ctx, o, ref.ID); err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			terminal(ref.ID)
			return ref.ID
		case "read":
			ref := v.start(o, Echo, how)
			v.settle(o, ref.ID) // reads the result
			return ref.ID
		}
		ref := v.start(o, Echo, how)
		terminal(ref.ID)
		return ref.ID
	}
	kept := func(why string, want ...string) {
		t.Helper()
		l, err := v.e.List(v.ctx, o)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		got := map[string]bool{}
		for _, st := range l {
			got[st.Work.ID] = true
		}
		for _, id := range want {
			if !got[id] {
				t.Fatalf("%s: %s was evicted; kept %v", why, id, got)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d kept, want %d", why, len(got), len(want))
		}
	}
	u1 := finish("unread")
	f := finish("fail")
	finish("read")
	u2 := finish("unread")
	kept("the read result goes first, though it settled after the unread one and the failed one", u1, f, u2)
	x := finish("cancel")
	kept("then the failed Work", u1, u2, x)
	u3 := finish("unread")
	kept("then the cancelled Work", u1, u2, u3)
	u4 := finish("unread")
	kept("unread results last, oldest first", u2, u3, u4)
	if _, err := v.e.Status(v.ctx, o, u1); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("Status(evicted): %v, want ErrNotFound", err)
	}
}
