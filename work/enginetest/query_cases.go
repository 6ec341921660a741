package enginetest

import (
	"errors"
	"strconv"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/internal/contract"
)

func (s *suite) ownerIsolation(t *testing.T) {
	v := s.env(t, nil)
	a, b := owner(t, "a"), owner(t, "b")
	ref, c := v.running(a, Agent, "")
	defer v.finish(c, "", nil)
	for _, id := range []string{ref.ID, "0123456789abcdef0123456789abcdef", "not-an-id"} {
		_, err := v.e.Status(t.Context(), b, id)
		wantErr(t, "Status(other owner)", err, work.ErrNotFound)
		_, _, err = v.e.Result(v.ctx, b, id, 0)
		wantErr(t, "Result(other owner)", err, work.ErrNotFound)
		_, err = v.e.Cancel(t.Context(), b, id)
		wantErr(t, "Cancel(other owner)", err, work.ErrNotFound)
		_, err = v.e.Detach(t.Context(), b, id)
		wantErr(t, "Detach(other owner)", err, work.ErrNotFound)
		_, err = v.e.Send(t.Context(), b, id, "c1", "hello")
		wantErr(t, "Send(other owner)", err, work.ErrNotFound)
	}
	if l, _ := v.e.List(t.Context(), b); len(l) != 0 {
		t.Fatalf("other owner lists %d Works", len(l))
	}
	if rows, _, err := boundary.Rows(t.Context(), v.e, b); err != nil || len(rows) != 0 {
		t.Fatalf("other owner has %d rows (%v)", len(rows), err)
	}
	if err := v.e.Release(t.Context(), b); err != nil { // releasing another owner touches nothing of a's
		t.Fatalf("Release(other owner): %v", err)
	}
	if st := v.status(a, ref.ID); st.State != work.StateRunning {
		t.Fatalf("after another owner's Release: %s", st.State)
	}
}

func (s *suite) listOrder(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxOutstanding = 60; c.MaxRunning = 60; c.Retain = 100 })
	o := owner(t, "list")
	var done []string
	for i := range 3 {
		ref := v.start(o, Echo, strconv.Itoa(i))
		v.settle(o, ref.ID)
		done = append(done, ref.ID)
	}
	var live []string
	var ctls []*control
	for range 2 {
		ref, c := v.running(o, Func, "")
		live = append(live, ref.ID)
		ctls = append(ctls, c)
	}
	l, err := v.e.List(t.Context(), o)
	if err != nil || len(l) != 5 {
		t.Fatalf("List = %d, %v", len(l), err)
	}
	want := []string{live[1], live[0], done[2], done[1], done[0]}
	for i, st := range l {
		if st.Work.ID != want[i] {
			t.Fatalf("List[%d] = %s (%s), want %s: unfinished first, newest first", i, st.Work.ID, st.State, want[i])
		}
	}
	for _, c := range ctls {
		v.finish(c, "", nil)
	}
	// At most MaxListed.
	for i := 0; i < contract.MaxListed+2; i++ {
		v.settle(o, v.start(o, Echo, "n").ID)
	}
	if l, _ := v.e.List(t.Context(), o); len(l) != contract.MaxListed {
		t.Fatalf("List returned %d, want at most %d", len(l), contract.MaxListed)
	}
}

func (s *suite) statusRows(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning = 2; c.MaxOutstanding = 40; c.Retain = 100 })
	o := owner(t, "rows")
	read := v.start(o, Echo, "read")
	v.settle(o, read.ID) // completed and read: last priority
	failed, fc := v.running(o, Func, "")
	v.finish(fc, "", errors.New("boom"))
	v.settle(o, failed.ID)
	unread := v.start(o, Echo, "unread")
	v.eventually("completed unread Work", func() bool {
		st, err := v.e.Status(t.Context(), o, unread.ID)
		return err == nil && st.State == work.StateCompleted
	})
	running, rc := v.running(o, Func, "")
	running2, rc2 := v.running(o, Func, "")
	qtoken, qc := newControl(t, "")
	queued := v.start(o, Func, qtoken) // two slots: queued
	if st := v.status(o, queued.ID); st.State != work.StateQueued {
		t.Fatalf("third Work with two slots is %s", st.State)
	}
	rows, more, err := boundary.Rows(t.Context(), v.e, o)
	if err != nil {
		t.Fatalf("Rows: %v", err)
	}
	want := []string{unread.ID, failed.ID, running2.ID, running.ID, queued.ID, read.ID}
	if len(rows) != len(want) || more != 0 {
		t.Fatalf("Rows = %d rows, more %d; want %d, 0", len(rows), more, len(want))
	}
	for i, r := range rows {
		if r.ID != want[i] {
			t.Fatalf("row %d = %s (%s), want %s: unread, failed, running (newest first), queued, the rest", i, r.ID, r.State, want[i])
		}
		if r.TargetLabel == "" || !r.State.Valid() || r.Elapsed < 0 {
			t.Fatalf("row %d = %+v", i, r)
		}
	}
	if !rows[0].ResultAvailable || rows[1].ResultAvailable {
		t.Fatalf("result availability: %+v", rows[:2])
	}
	v.finish(rc, "", nil)
	v.finish(rc2, "", nil)
	v.finish(qc, "", nil)
	v.settle(o, queued.ID)
	// At most MaxRows, and how many were left out.
	for i := 0; i < boundary.MaxRows+3; i++ {
		v.settle(o, v.start(o, Echo, "n").ID)
	}
	if rows, more, err = boundary.Rows(t.Context(), v.e, o); err != nil {
		t.Fatalf("Rows: %v", err)
	}
	if visible := len(want) + boundary.MaxRows + 3; len(rows) != boundary.MaxRows || more != visible-boundary.MaxRows {
		t.Fatalf("Rows = %d rows, more %d; want %d, %d", len(rows), more, boundary.MaxRows, visible-boundary.MaxRows)
	}
}
