package enginetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// env is one test's Engine with helpers.
type env struct {
	t    *testing.T
	e    *work.Engine
	caps Capabilities
	cfg  Config
	rec  *Recorder // cfg.Observer
	ctx  context.Context
}

func defaults() Config {
	return Config{MaxRunning: 4, MaxOutstanding: 8, MaxStarts: 0, MaxDepth: 4,
		MaxResultBytes: 1 << 20, MaxDuration: -1, Retain: 64, Children: Children()}
}

func (s *suite) env(t *testing.T, edit func(*Config)) *env {
	cfg := defaults()
	rec := &Recorder{}
	cfg.Observer = rec
	if edit != nil {
		edit(&cfg)
	}
	e := s.h.NewEngine(t, cfg)
	if e == nil {
		t.Fatal("Harness.NewEngine returned nil")
	}
	return &env{t: t, e: e, caps: s.caps, cfg: cfg, rec: rec, ctx: context.Background()}
}

func owner(t *testing.T, name string) work.Owner {
	// Owner ids are unique per test so that an implementation with shared
	// state (a durable store) sees fresh owners.
	return work.NewOwner(name + "-" + strconv.FormatInt(tokenSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36))
}

func (v *env) spec(o work.Owner, label, input string) work.Spec {
	c := v.cfg.Children[label]
	if c.Job != nil {
		return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: c.Kind}, Input: input, Job: c.Job}
	}
	return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: c.Kind}, Input: input,
		Run: func(ctx context.Context) (string, error) { return c.Run(ctx, input) }}
}

func (v *env) start(o work.Owner, label, input string) work.Ref {
	v.t.Helper()
	ref, err := v.e.Start(v.ctx, v.spec(o, label, input))
	if err != nil {
		v.t.Fatalf("Start(%s): %v (cause: %v)", label, err, errors.Unwrap(err))
	}
	return ref
}

// running starts a controlled child and waits until it runs.
func (v *env) running(o work.Owner, label, onCancel string) (work.Ref, *control) {
	v.t.Helper()
	token, c := newControl(v.t, onCancel)
	ref := v.start(o, label, token)
	v.waitStartedOf(o, ref, c)
	return ref, c
}

// patience is how long the suite waits for something an engine must do
// (a child to start, a poll, a cancel to reach a child) before it fails
// the case: a bound that catches a hang, not a speed goal. A durable
// engine on a loaded machine has taken more than 30 s.
const patience = 90 * time.Second

func (v *env) waitStarted(c *control) {
	v.t.Helper()
	select {
	case <-c.started:
	case <-time.After(patience):
		v.t.Fatalf("the child did not start within %s", patience)
	}
}

// waitStartedOf is waitStarted for the Work of ref, whose Status (state,
// attempt, times) the failure reports: a start that does not come is then
// told apart from one the Engine lost.
func (v *env) waitStartedOf(o work.Owner, ref work.Ref, c *control) {
	v.t.Helper()
	select {
	case <-c.started:
	case <-time.After(patience):
		st, err := v.e.Status(v.ctx, o, ref.ID)
		v.t.Fatalf("the child of %s did not start within %s: status %+v, %v", ref.ID, patience, st, err)
	}
}

// settle waits (Result, up to its cap) until the Work is terminal.
func (v *env) settle(o work.Owner, id string) (work.Status, string) {
	v.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, out, err := v.e.Result(v.ctx, o, id, work.MaxResultWait)
		if err != nil {
			v.t.Fatalf("Result: %v", err)
		}
		if st.State.Terminal() {
			return st, out
		}
		if time.Now().After(deadline) {
			v.t.Fatalf("Work %s is still %s after 60s", id, st.State)
		}
	}
}

func (v *env) status(o work.Owner, id string) work.Status {
	v.t.Helper()
	st, err := v.e.Status(v.ctx, o, id)
	if err != nil {
		v.t.Fatalf("Status: %v", err)
	}
	return st
}

// eventually polls cond: only for a completed Work that must stay unread
// (Result would read it).
func (v *env) eventually(what string, cond func() bool) {
	v.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for d := time.Millisecond; !cond(); d = min(2*d, 100*time.Millisecond) {
		if time.Now().After(deadline) {
			v.t.Fatalf("%s: not within 60s", what)
		}
		time.Sleep(d)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

func (v *env) boundary(c *control) boundaryReply {
	v.t.Helper()
	reply := make(chan boundaryReply, 1)
	select {
	case c.boundary <- reply:
	case <-time.After(patience):
		v.t.Fatal("the child did not reach its boundary")
	}
	return <-reply
}

func (v *env) finish(c *control, out string, err error) {
	c.finish <- finishReq{out, err}
}
