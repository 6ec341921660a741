package enginetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// specResultBytes: a Spec's own output bound (Spec.MaxResultBytes) holds
// on an Engine with no bound of its own (Config.MaxResultBytes 0: no
// limit), for background Work and for a foreground call alike.
func (s *suite) specResultBytes(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxResultBytes = 0 })
	o := owner(t, "spec-bytes")
	bounded := func(input string) work.Spec {
		sp := v.spec(o, Echo, input)
		sp.MaxResultBytes = 16
		return sp
	}
	ok, err := v.e.Start(v.ctx, bounded(strings.Repeat("a", 16)))
	if err != nil {
		t.Fatalf("Start(16 bytes): %v", err)
	}
	if st, out := v.settle(o, ok.ID); st.State != work.StateCompleted || len(out) != 16 {
		t.Fatalf("16 bytes under a 16-byte Spec bound: %s (%s), %d bytes; want completed, 16", st.State, st.Class, len(out))
	}
	big, err := v.e.Start(v.ctx, bounded(strings.Repeat("b", 17)))
	if err != nil {
		t.Fatalf("Start(17 bytes): %v", err)
	}
	if st, out := v.settle(o, big.ID); st.State != work.StateFailed || st.Class != work.ClassResultTooLarge || out != "" || st.ResultAvailable {
		t.Fatalf("17 bytes under a 16-byte Spec bound: %s (class %q), %d bytes, available %v; want failed, %s, no result",
			st.State, st.Class, len(out), st.ResultAvailable, work.ClassResultTooLarge)
	}
	_, err = v.e.Call(v.ctx, bounded(strings.Repeat("c", 17)))
	var we *work.Error
	if !errors.Is(err, work.ErrChildFailed) || !errors.As(err, &we) || we.Class != work.ClassResultTooLarge {
		t.Fatalf("Call(17 bytes under a 16-byte Spec bound): %v; want ErrChildFailed with class %s", err, work.ClassResultTooLarge)
	}
}

// limitValues: every limit option means the same for 0 and for a negative
// value on every Engine. 0 keeps the documented default (MaxRunning,
// MaxOutstanding, MaxDepth, the retention count) or means no limit
// (MaxStarts, MaxResultBytes); a negative value is invalid: every Start
// and Call fails with work.ErrInvalidLimit and nothing is registered.
func (s *suite) limitValues(t *testing.T) {
	t.Run("MaxRunningZeroIsTheDefault", func(t *testing.T) {
		v := s.env(t, func(c *Config) { c.MaxRunning = 0 })
		o := owner(t, "running0")
		// Two Works of one target run at once (the default is 8).
		_, c1 := v.running(o, Func, "")
		_, c2 := v.running(o, Func, "")
		v.finish(c1, "", nil)
		v.finish(c2, "", nil)
	})
	t.Run("MaxOutstandingZeroIsTheDefault", func(t *testing.T) {
		v := s.env(t, func(c *Config) { c.MaxOutstanding = 0 })
		if !v.hasApprovals() {
			t.Fatal("the Engine has no approvals, which this case holds Work queued with")
		}
		o := owner(t, "outstanding0")
		for range workDefaults().MaxOutstanding {
			v.held(o, Echo, "held", 0)
		}
		sp := v.spec(o, Echo, "one too many")
		sp.NeedsApproval = true
		_, err := v.e.Start(v.ctx, sp)
		wantErr(t, "Start past the default outstanding limit with MaxOutstanding 0", err, work.ErrLimit)
		if !strings.Contains(err.Error(), observe.LimitOutstanding) {
			t.Fatalf("limit error %q does not name %q", err, observe.LimitOutstanding)
		}
	})
	t.Run("MaxDepthZeroIsTheDefault", func(t *testing.T) {
		v := s.env(t, func(c *Config) { c.MaxDepth = 0 })
		o := owner(t, "depth0")
		if _, out := v.settle(o, v.start(o, Echo, "top").ID); out != "top" {
			t.Fatalf("a top-level start with MaxDepth 0: output %q", out)
		}
		if out, err := v.e.Call(v.ctx, v.spec(o, Echo, "fg")); err != nil || out != "fg" {
			t.Fatalf("a top-level Call with MaxDepth 0: %q, %v", out, err)
		}
		// A child's scope (depth 1) may start Work too: the default is 4.
		_, c := v.running(o, Agent, "")
		r := v.boundary(c)
		if !r.ok {
			t.Fatal("the child's context has no work.Execution")
		}
		nested := v.start(r.scope, Echo, "nested")
		if _, out := v.settle(r.scope, nested.ID); out != "nested" {
			t.Fatalf("a start at depth 1 with MaxDepth 0: output %q", out)
		}
		v.finish(c, "", nil)
	})
	t.Run("MaxResultBytesZeroIsNoLimit", func(t *testing.T) {
		v := s.env(t, func(c *Config) { c.MaxResultBytes = 0 })
		o := owner(t, "bytes0")
		in := strings.Repeat("x", workDefaults().MaxResultBytes+1) // past the default
		st, out := v.settle(o, v.start(o, Echo, in).ID)
		if st.State != work.StateCompleted || out != in {
			t.Fatalf("%d bytes with MaxResultBytes 0: %s (class %q), %d bytes; want completed, all of it",
				len(in), st.State, st.Class, len(out))
		}
	})
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"MaxRunning", func(c *Config) { c.MaxRunning = -1 }},
		{"MaxOutstanding", func(c *Config) { c.MaxOutstanding = -1 }},
		{"MaxStarts", func(c *Config) { c.MaxStarts = -1 }},
		{"MaxDepth", func(c *Config) { c.MaxDepth = -1 }},
		{"MaxResultBytes", func(c *Config) { c.MaxResultBytes = -1 }},
		{"Retain", func(c *Config) { c.Retain = -1 }},
	} {
		t.Run(tc.name+"NegativeIsInvalid", func(t *testing.T) {
			v := s.env(t, tc.edit)
			o := owner(t, "negative")
			_, err := v.e.Start(v.ctx, v.spec(o, Echo, "x"))
			wantErr(t, "Start with a negative "+tc.name, err, work.ErrInvalidLimit)
			_, err = v.e.Call(v.ctx, v.spec(o, Echo, "x"))
			wantErr(t, "Call with a negative "+tc.name, err, work.ErrInvalidLimit)
			if l, err := v.e.List(v.ctx, o); err != nil || len(l) != 0 {
				t.Fatalf("List after refused starts: %+v, %v; want nothing", l, err)
			}
		})
	}
}

// workDefaults returns work's limits with no option given: what 0 means for
// each limit whose 0 is its default.
func workDefaults() limit.Limits {
	l, err := seam.ResolveLimits([]work.Option(nil))
	if err != nil {
		panic("work's limits with no option: " + err.Error())
	}
	return l
}
