package enginetest

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

func (s *suite) badInput(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "bad")
	for _, tc := range []struct {
		name string
		spec work.Spec
		want error
	}{
		{"zero owner", work.Spec{Target: work.Target{Label: Echo, Kind: work.KindFunction}, Run: func(context.Context) (string, error) { return "", nil }}, work.ErrInvalidOwner},
		{"no label", work.Spec{Owner: o, Target: work.Target{Kind: work.KindFunction}, Run: func(context.Context) (string, error) { return "", nil }}, work.ErrInvalidSpec},
		{"bad kind", work.Spec{Owner: o, Target: work.Target{Label: Echo, Kind: 99}, Run: func(context.Context) (string, error) { return "", nil }}, work.ErrInvalidSpec},
		{"no run", work.Spec{Owner: o, Target: work.Target{Label: Echo, Kind: work.KindFunction}}, work.ErrInvalidSpec},
	} {
		_, err := v.e.Start(v.ctx, tc.spec)
		wantErr(t, "Start "+tc.name, err, tc.want)
	}
	if l, _ := v.e.List(t.Context(), o); len(l) != 0 {
		t.Fatalf("refused starts registered Work: %+v", l)
	}
	_, err := v.e.List(t.Context(), work.Owner{})
	wantErr(t, "List(zero owner)", err, work.ErrInvalidOwner)
	_, err = v.e.Status(t.Context(), work.Owner{}, "x")
	wantErr(t, "Status(zero owner)", err, work.ErrInvalidOwner)
	if rows, more, err := boundary.Rows(t.Context(), v.e, work.Owner{}); err != nil || len(rows) != 0 || more != 0 {
		t.Fatalf("Rows(zero owner) = %d rows, %d more, %v; want nothing and no error", len(rows), more, err)
	}
	_, err = boundary.Live(t.Context(), v.e, work.Owner{})
	wantErr(t, "Live(zero owner)", err, work.ErrInvalidOwner)
	ref := v.start(o, Echo, "x")
	_, _, err = v.e.Result(v.ctx, o, ref.ID, -time.Second)
	wantErr(t, "Result(negative timeout)", err, work.ErrInvalidTimeout)
	if l, err := v.e.List(t.Context(), owner(t, "nobody")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("List(unknown owner) = %#v, %v; want an empty non-nil slice", l, err)
	}
}

func (s *suite) limitOutstanding(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxOutstanding = 2 })
	o := owner(t, "out")
	_, c1 := v.running(o, Func, "")
	r2, c2 := v.running(o, Func, "")
	_, err := v.e.Start(v.ctx, v.spec(o, Echo, "x"))
	wantErr(t, "third Start", err, work.ErrLimit)
	if !strings.Contains(err.Error(), observe.LimitOutstanding) {
		t.Fatalf("limit error %q does not name %q", err, observe.LimitOutstanding)
	}
	// Another owner is not limited by o's Work.
	v.start(owner(t, "other"), Echo, "x")
	v.finish(c2, "done", nil)
	v.settle(o, r2.ID)
	ref := v.start(o, Echo, "again") // a slot is free again
	v.settle(o, ref.ID)
	v.finish(c1, "", nil)
}

func (s *suite) limitStarts(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxStarts = 2 })
	o := owner(t, "starts")
	for i := range 2 {
		v.settle(o, v.start(o, Echo, strconv.Itoa(i)).ID)
	}
	_, err := v.e.Start(v.ctx, v.spec(o, Echo, "x"))
	wantErr(t, "third Start", err, work.ErrLimit)
	if !strings.Contains(err.Error(), observe.LimitStarts) {
		t.Fatalf("limit error %q does not name %q", err, observe.LimitStarts)
	}
	// Release forgets the owner, its starts budget included.
	if err := v.e.Release(t.Context(), o); err != nil {
		t.Fatalf("Release: %v", err)
	}
	v.settle(o, v.start(o, Echo, "after release").ID)
}

func (s *suite) limitDepth(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxDepth = 1 })
	o := owner(t, "depth")
	_, c := v.running(o, Agent, "")
	r := v.boundary(c)
	if !r.ok {
		t.Fatal("the child's context has no work.Execution")
	}
	if r.scope.Depth() != 1 || r.scope.IsZero() {
		t.Fatalf("child scope depth = %d, want 1", r.scope.Depth())
	}
	_, err := v.e.Start(v.ctx, v.spec(r.scope, Echo, "nested"))
	wantErr(t, "Start in a child's scope at the depth limit", err, work.ErrLimit)
	if !strings.Contains(err.Error(), observe.LimitDepth) {
		t.Fatalf("limit error %q does not name %q", err, observe.LimitDepth)
	}
	v.finish(c, "", nil)
}

func (s *suite) limitResultBytes(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxResultBytes = 16 })
	o := owner(t, "bytes")
	ok := v.start(o, Echo, strings.Repeat("a", 16))
	if st, out := v.settle(o, ok.ID); st.State != work.StateCompleted || len(out) != 16 {
		t.Fatalf("16 bytes: %s %d", st.State, len(out))
	}
	big := v.start(o, Echo, strings.Repeat("b", 17))
	if st, out := v.settle(o, big.ID); st.State != work.StateFailed || out != "" || st.ResultAvailable {
		t.Fatalf("17 bytes: %+v %q", st, out)
	}
}

func (s *suite) limitDuration(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxDuration = 200 * time.Millisecond })
	o := owner(t, "dur")
	token, c := newControl(t, "")
	ref := v.start(o, Func, token)
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateFailed {
		t.Fatalf("overrun: %s, want failed", st.State)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("the child's context was not done at the deadline")
	}
}

// launchIdempotency: a start repeated with the same CallID (and the same
// target and input digest) returns the same Ref and starts nothing; with
// another target or input it fails with ErrConflict; another owner's
// CallID is its own.
func (s *suite) launchIdempotency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "launch")
	launch := func(o work.Owner, label, input string) (work.Ref, error) {
		sp := v.spec(o, label, input)
		sp.CallID, sp.InputDigest = "call-1", sha256.Sum256([]byte(input))
		return v.e.Start(v.ctx, sp)
	}
	first, err := launch(o, Echo, "a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := launch(o, Echo, "a")
	if err != nil || again != first {
		t.Fatalf("repeated launch = %+v, %v; want %+v", again, err, first)
	}
	if l, err := v.e.List(t.Context(), o); err != nil || len(l) != 1 {
		t.Fatalf("a repeated launch started Work: %d listed, %v", len(l), err)
	}
	_, err = launch(o, Echo, "b")
	wantErr(t, "same call id, other input", err, work.ErrConflict)
	_, err = launch(o, Func, "a")
	wantErr(t, "same call id, other target", err, work.ErrConflict)
	other, err := launch(owner(t, "launch-other"), Echo, "a")
	if err != nil || other.ID == first.ID {
		t.Fatalf("another owner's launch = %+v, %v", other, err)
	}
	v.settle(o, first.ID)
}
