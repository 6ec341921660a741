// Package enginetest is the conformance suite of the work.Engine seam: one
// test that drives any implementation through the whole model-facing
// contract (lifecycle, owner isolation, limits, the result wait, cancel
// races, guidance order and idempotency, launch idempotency, detach,
// release, status rows, foreground calls, budgets and pools). It follows the Go Cloud Development Kit's drivertest:
// an implementation supplies a Harness and calls Run from its own test.
//
//	func TestConformance(t *testing.T) { enginetest.Run(t, myHarness{}) }
//
// The suite's children (Children) are ordinary Go functions keyed by target
// label; an implementation that runs children in other processes registers
// them on its workers, which must live in the test's process (the suite
// steers its children through in-memory channels). Behaviour an
// implementation may legitimately choose (its guarantees, how attempts
// count) is a Capabilities value, checked like everything else, never a
// skipped test.
//
// The package imports only the standard library and work.
package enginetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

// Harness makes Engines for the suite.
type Harness interface {
	// NewEngine returns a fresh Engine with cfg's limits that runs
	// cfg.Children by target label. It registers its own cleanup with t
	// (closing the Engine and anything it started). Every call must give
	// an Engine that shares no owners or Work with earlier ones.
	NewEngine(t *testing.T, cfg Config) work.Engine
	// Capabilities reports what the implementation legitimately chooses.
	Capabilities() Capabilities
}

// Config is the configuration the suite asks for. Every field is set.
type Config struct {
	MaxRunning     int           // Works of one target running at once (the suite's queued Work shares its target with the running ones)
	MaxOutstanding int           // queued + running Works per owner
	MaxStarts      int           // starts per owner over its lifetime; 0: no limit
	MaxDepth       int           // owner nesting limit
	MaxResultBytes int           // output size limit
	MaxDuration    time.Duration // per-Work deadline; 0: none
	Retain         int           // terminal Works kept per owner
	Children       map[string]Child
}

// Capabilities is what an implementation legitimately chooses.
type Capabilities struct {
	// Guarantees is the pair every Ref must carry (process-local for the
	// in-process Supervisor, durable for a durable runner).
	Guarantees work.Guarantees
	// Attempt is the attempt a Work that ran once must report: 1.
	Attempt int
	// ExactWaitClock: the Engine measures Result waits on real time, so a
	// short timeout returns a non-terminal Status after about that long.
	// Every implementation must honour ctx and the zero timeout.
	ExactWaitClock bool
	// Pools: the Engine carries budgets and pools (SetPool). An Engine
	// without them must refuse SetPool with an error, never accept a pool
	// it does not enforce.
	Pools bool
}

// Child is one of the suite's children: run with the Work's input.
type Child struct {
	Kind work.Kind
	Run  func(ctx context.Context, input string) (string, error)
}

// The suite's target labels.
const (
	// Echo is a function child that returns its input at once.
	Echo = "echo"
	// Agent is an agent child steered by the test: its input names a
	// control that tells it when to take guidance and when to return.
	Agent = "agent"
	// Func is a function child steered like Agent.
	Func = "func"
	// Turns is an agent child that makes model requests (BeginRequest)
	// until its budget grants the final one, and returns
	// "requests=N final=BUDGET"; a refused request fails it.
	Turns = "turns"
)

// Children returns the suite's children, keyed by label. A Harness must
// run exactly these for Config.Children (the suite passes them in).
func Children() map[string]Child {
	return map[string]Child{
		Echo:  {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
		Agent: {Kind: work.KindAgent, Run: runControlled},
		Func:  {Kind: work.KindFunction, Run: runControlled},
		Turns: {Kind: work.KindAgent, Run: runTurns},
	}
}

func runTurns(ctx context.Context, _ string) (string, error) {
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return "", errors.New("enginetest: no Execution")
	}
	for n := 1; n <= 1000; n++ {
		turn, err := ex.BeginRequest()
		if err != nil {
			return "", err
		}
		ex.EndRequest(3, 2, true)
		if turn.Final {
			return "requests=" + strconv.Itoa(n) + " final=" + turn.Budget, nil
		}
	}
	return "", errors.New("enginetest: the budget never ran out")
}

// control steers one controlled child run, keyed by the Work's input.
type control struct {
	started  chan struct{} // closed when the child starts running
	once     sync.Once
	runs     atomic.Int32
	boundary chan chan boundaryReply // a model-request boundary
	finish   chan finishReq          // return
	onCancel string                  // "" (return ctx error), "complete" (on the test's finish) or "fail"
	ended    chan error              // ctx.Err() when the child returned
}

type boundaryReply struct {
	guidance []string
	scope    work.Owner
	ok       bool // the child had an Execution
}

type finishReq struct {
	out string
	err error
}

var (
	controls sync.Map // token -> *control
	tokenSeq atomic.Int64
)

func newControl(t *testing.T, onCancel string) (string, *control) {
	token := "ctl-" + strconv.FormatInt(tokenSeq.Add(1), 10)
	c := &control{started: make(chan struct{}), boundary: make(chan chan boundaryReply),
		finish: make(chan finishReq, 1), onCancel: onCancel, ended: make(chan error, 4)}
	controls.Store(token, c)
	t.Cleanup(func() { controls.Delete(token) })
	return token, c
}

func runControlled(ctx context.Context, token string) (string, error) {
	v, ok := controls.Load(token)
	if !ok {
		return "", errors.New("enginetest: unknown control")
	}
	c := v.(*control)
	c.runs.Add(1)
	c.once.Do(func() { close(c.started) })
	for {
		select {
		case <-ctx.Done():
			c.ended <- ctx.Err()
			switch c.onCancel {
			case "complete":
				// Completes when the test says so: the test decides
				// whether a cancel lands before or after the completion.
				f := <-c.finish
				return f.out, f.err
			case "fail":
				return "", errors.New("an unrelated failure")
			}
			return "", ctx.Err()
		case reply := <-c.boundary:
			ex, ok := work.ExecutionFrom(ctx)
			r := boundaryReply{ok: ok}
			if ok {
				r.guidance, r.scope = ex.Guidance(), ex.Scope()
			}
			reply <- r
		case f := <-c.finish:
			c.ended <- ctx.Err()
			return f.out, f.err
		}
	}
}

// Run runs the conformance suite against h.
func Run(t *testing.T, h Harness) {
	caps := h.Capabilities()
	if caps.Attempt == 0 {
		t.Fatal("enginetest: Capabilities.Attempt must be set (1 for an engine that ran a Work once)")
	}
	s := &suite{h: h, caps: caps}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Lifecycle", s.lifecycle},
		{"ObserverAndClock", s.observerAndClock},
		{"BadInput", s.badInput},
		{"OwnerIsolation", s.ownerIsolation},
		{"LimitOutstanding", s.limitOutstanding},
		{"LimitStarts", s.limitStarts},
		{"LimitDepth", s.limitDepth},
		{"LimitResultBytes", s.limitResultBytes},
		{"LimitDuration", s.limitDuration},
		{"ResultWait", s.resultWait},
		{"CancelQueued", s.cancelQueued},
		{"CancelRunning", s.cancelRunning},
		{"CancelLosesToCompletion", s.cancelLosesToCompletion},
		{"CancelUnrelatedFailure", s.cancelUnrelatedFailure},
		{"CancelTerminal", s.cancelTerminal},
		{"ChildFailure", s.childFailure},
		{"GuidanceOrder", s.guidanceOrder},
		{"GuidanceIdempotency", s.guidanceIdempotency},
		{"GuidanceRefusals", s.guidanceRefusals},
		{"Detach", s.detach},
		{"Release", s.release},
		{"ListOrder", s.listOrder},
		{"StatusRows", s.statusRows},
		{"Foreground", s.foreground},
		{"Budget", s.budget},
		{"LaunchIdempotency", s.launchIdempotency},
		{"Pool", s.pool},
		{"Subscribe", s.subscribe},
	} {
		t.Run(tc.name, tc.run)
	}
}

type suite struct {
	h    Harness
	caps Capabilities
}

// env is one test's Engine with helpers.
type env struct {
	t    *testing.T
	e    work.Engine
	caps Capabilities
	cfg  Config
	ctx  context.Context
}

func defaults() Config {
	return Config{MaxRunning: 4, MaxOutstanding: 8, MaxStarts: 0, MaxDepth: 4,
		MaxResultBytes: 1 << 20, Retain: 64, Children: Children()}
}

func (s *suite) env(t *testing.T, edit func(*Config)) *env {
	cfg := defaults()
	if edit != nil {
		edit(&cfg)
	}
	e := s.h.NewEngine(t, cfg)
	if e == nil {
		t.Fatal("Harness.NewEngine returned nil")
	}
	return &env{t: t, e: e, caps: s.caps, cfg: cfg, ctx: context.Background()}
}

func owner(t *testing.T, name string) work.Owner {
	// Owner ids are unique per test so that an implementation with shared
	// state (a durable store) sees fresh owners.
	return work.NewOwner(name + "-" + strconv.FormatInt(tokenSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36))
}

func (v *env) spec(o work.Owner, label, input string) work.Spec {
	c := v.cfg.Children[label]
	return work.Spec{Owner: o, Target: work.Target{Label: label, Kind: c.Kind}, Input: input,
		Run: func(ctx context.Context) (string, error) { return c.Run(ctx, input) }}
}

func (v *env) start(o work.Owner, label, input string) work.Ref {
	v.t.Helper()
	ref, err := v.e.Start(v.ctx, v.spec(o, label, input))
	if err != nil {
		v.t.Fatalf("Start(%s): %v", label, err)
	}
	return ref
}

// running starts a controlled child and waits until it runs.
func (v *env) running(o work.Owner, label, onCancel string) (work.Ref, *control) {
	v.t.Helper()
	token, c := newControl(v.t, onCancel)
	ref := v.start(o, label, token)
	v.waitStarted(c)
	return ref, c
}

func (v *env) waitStarted(c *control) {
	v.t.Helper()
	select {
	case <-c.started:
	case <-time.After(30 * time.Second):
		v.t.Fatal("the child did not start within 30s")
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
	st, err := v.e.Status(o, id)
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
	case <-time.After(30 * time.Second):
		v.t.Fatal("the child did not reach its boundary")
	}
	return <-reply
}

func (v *env) finish(c *control, out string, err error) {
	c.finish <- finishReq{out, err}
}

func (s *suite) lifecycle(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "life")
	ref, c := v.running(o, Agent, "")
	if !work.IsID(ref.ID) || ref.TargetID != Agent {
		t.Fatalf("Ref = %+v, want a 32-hex id and targetId %q", ref, Agent)
	}
	if g := ref.Guarantees(); g != s.caps.Guarantees {
		t.Fatalf("guarantees = %+v, want %+v", g, s.caps.Guarantees)
	}
	b, _ := json.Marshal(ref)
	want := fmt.Sprintf(`{"kind":"work.ref","id":%q,"targetId":"agent","guarantees":{"execution":%q,"rejoin":%q}}`,
		ref.ID, s.caps.Guarantees.Execution, s.caps.Guarantees.Rejoin)
	if string(b) != want {
		t.Fatalf("ref JSON = %s, want %s", b, want)
	}
	st := v.status(o, ref.ID)
	if st.State != work.StateRunning || st.StartedAt.IsZero() || !st.FinishedAt.IsZero() || st.ResultAvailable ||
		st.TargetLabel != Agent || st.Work.ID != ref.ID || st.Work.Guarantees() != s.caps.Guarantees {
		t.Fatalf("running status = %+v", st)
	}
	if st.CreatedAt.After(st.StartedAt) {
		t.Fatalf("createdAt %v after startedAt %v", st.CreatedAt, st.StartedAt)
	}
	v.finish(c, "the exact output\n with \"quotes\" ", nil)
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "the exact output\n with \"quotes\" " || !st.ResultAvailable || st.FinishedAt.IsZero() {
		t.Fatalf("completed: status %+v output %q", st, out)
	}
	var js map[string]any
	b, _ = json.Marshal(st)
	_ = json.Unmarshal(b, &js)
	if js["attachment"] != "attached" || js["attempt"] != float64(s.caps.Attempt) || js["state"] != "completed" ||
		js["startedAt"] == nil || js["finishedAt"] == nil || js["resultAvailable"] != true {
		t.Fatalf("status JSON = %s", b)
	}
	if strings.Contains(string(b), "exact output") {
		t.Fatalf("status JSON carries the output: %s", b)
	}
	// A result can be read again.
	if _, out2, err := v.e.Result(v.ctx, o, ref.ID, 0); err != nil || out2 != out {
		t.Fatalf("second read = %q, %v", out2, err)
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the child ran %d times, want 1", n)
	}
	// An empty output is a valid result.
	ref2 := v.start(o, Echo, "")
	if st, out := v.settle(o, ref2.ID); st.State != work.StateCompleted || out != "" || !st.ResultAvailable {
		t.Fatalf("empty result: %+v %q", st, out)
	}
}

func (s *suite) observerAndClock(t *testing.T) {
	v := s.env(t, nil)
	if v.e.Observer() == nil {
		t.Fatal("Observer() is nil")
	}
	if n := v.e.Now(); n.IsZero() {
		t.Fatal("Now() is zero")
	}
}

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
	if l, _ := v.e.List(o); len(l) != 0 {
		t.Fatalf("refused starts registered Work: %+v", l)
	}
	_, err := v.e.List(work.Owner{})
	wantErr(t, "List(zero owner)", err, work.ErrInvalidOwner)
	_, err = v.e.Status(work.Owner{}, "x")
	wantErr(t, "Status(zero owner)", err, work.ErrInvalidOwner)
	if rows, more := v.e.Rows(work.Owner{}); len(rows) != 0 || more != 0 {
		t.Fatal("Rows(zero owner) returned rows")
	}
	ref := v.start(o, Echo, "x")
	_, _, err = v.e.Result(v.ctx, o, ref.ID, -time.Second)
	wantErr(t, "Result(negative timeout)", err, work.ErrInvalidTimeout)
	if l, err := v.e.List(owner(t, "nobody")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("List(unknown owner) = %#v, %v; want an empty non-nil slice", l, err)
	}
}

func (s *suite) ownerIsolation(t *testing.T) {
	v := s.env(t, nil)
	a, b := owner(t, "a"), owner(t, "b")
	ref, c := v.running(a, Agent, "")
	defer v.finish(c, "", nil)
	for _, id := range []string{ref.ID, "0123456789abcdef0123456789abcdef", "not-an-id"} {
		_, err := v.e.Status(b, id)
		wantErr(t, "Status(other owner)", err, work.ErrNotFound)
		_, _, err = v.e.Result(v.ctx, b, id, 0)
		wantErr(t, "Result(other owner)", err, work.ErrNotFound)
		_, err = v.e.Cancel(b, id)
		wantErr(t, "Cancel(other owner)", err, work.ErrNotFound)
		_, err = v.e.Detach(b, id)
		wantErr(t, "Detach(other owner)", err, work.ErrNotFound)
		_, err = v.e.Send(b, id, "c1", "hello")
		wantErr(t, "Send(other owner)", err, work.ErrNotFound)
	}
	if l, _ := v.e.List(b); len(l) != 0 {
		t.Fatalf("other owner lists %d Works", len(l))
	}
	if rows, _ := v.e.Rows(b); len(rows) != 0 {
		t.Fatalf("other owner has %d rows", len(rows))
	}
	v.e.Release(b) // releasing another owner touches nothing of a's
	if st := v.status(a, ref.ID); st.State != work.StateRunning {
		t.Fatalf("after another owner's Release: %s", st.State)
	}
}

func (s *suite) limitOutstanding(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxOutstanding = 2 })
	o := owner(t, "out")
	_, c1 := v.running(o, Func, "")
	r2, c2 := v.running(o, Func, "")
	_, err := v.e.Start(v.ctx, v.spec(o, Echo, "x"))
	wantErr(t, "third Start", err, work.ErrLimit)
	if !strings.Contains(err.Error(), work.LimitOutstanding) {
		t.Fatalf("limit error %q does not name %q", err, work.LimitOutstanding)
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
	if !strings.Contains(err.Error(), work.LimitStarts) {
		t.Fatalf("limit error %q does not name %q", err, work.LimitStarts)
	}
	// Release forgets the owner, its starts budget included.
	v.e.Release(o)
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
	if !strings.Contains(err.Error(), work.LimitDepth) {
		t.Fatalf("limit error %q does not name %q", err, work.LimitDepth)
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
	if l, err := v.e.List(o); err != nil || len(l) != 1 {
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

// budget: a Work's budget travels with it and is counted at its child's
// boundary: the turns run out, the next request is the final one, and
// Status names the budget; started to fail on exhaustion, the Work fails.
func (s *suite) budget(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "budget")
	sp := v.spec(o, Turns, "")
	sp.Budget = work.Budget{MaxTurns: 2}
	ref, err := v.e.Start(v.ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "requests=3 final=turns" || st.BudgetExhausted != work.BudgetTurns {
		t.Fatalf("2 turns: %s %q budget %q, want completed \"requests=3 final=turns\" budget turns", st.State, out, st.BudgetExhausted)
	}
	sp.Budget, sp.FailOnBudget = work.Budget{MaxTurns: 1, MaxTokens: 1000}, true
	ref, err = v.e.Start(v.ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	st, _ = v.settle(o, ref.ID)
	if st.State != work.StateFailed || st.BudgetExhausted != work.BudgetTurns {
		t.Fatalf("FailOnBudget: %s budget %q, want failed, turns", st.State, st.BudgetExhausted)
	}
}

func (s *suite) resultWait(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "wait")
	ref, c := v.running(o, Func, "")
	// Zero does not wait.
	st, out, err := v.e.Result(v.ctx, o, ref.ID, 0)
	if err != nil || st.State != work.StateRunning || out != "" {
		t.Fatalf("Result(0) = %s %q %v", st.State, out, err)
	}
	if s.caps.ExactWaitClock {
		begin := time.Now()
		st, _, _ = v.e.Result(v.ctx, o, ref.ID, 150*time.Millisecond)
		if el := time.Since(begin); st.State != work.StateRunning || el < 150*time.Millisecond || el > 20*time.Second {
			t.Fatalf("Result(150ms) = %s after %v", st.State, el)
		}
	}
	// ctx ends the wait.
	ctx, cancel := context.WithCancel(v.ctx)
	done := make(chan work.Status, 1)
	go func() {
		st, _, _ := v.e.Result(ctx, o, ref.ID, work.MaxResultWait)
		done <- st
	}()
	cancel()
	select {
	case st := <-done:
		if st.State.Terminal() {
			t.Fatalf("Result after ctx: %s", st.State)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Result ignored its context")
	}
	// Settlement wakes a waiter, long before the timeout.
	got := make(chan string, 1)
	go func() {
		_, out, _ := v.e.Result(v.ctx, o, ref.ID, 10*time.Hour) // capped at MaxResultWait
		got <- out
	}()
	v.finish(c, "woken", nil)
	select {
	case out := <-got:
		if out != "woken" {
			// The waiter may have started after settlement: then it read at once.
			t.Fatalf("woken waiter got %q", out)
		}
	case <-time.After(work.MaxResultWait + 10*time.Second):
		t.Fatal("settlement did not wake the waiter")
	}
}

func (s *suite) cancelQueued(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning = 1 })
	o := owner(t, "cq")
	_, c1 := v.running(o, Func, "")
	token, c2 := newControl(t, "")
	ref := v.start(o, Func, token)
	if st := v.status(o, ref.ID); st.State != work.StateQueued || !st.StartedAt.IsZero() {
		t.Fatalf("second Work with one slot: %+v, want queued", st)
	}
	r, err := v.e.Cancel(o, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelled || r.WorkID != ref.ID || r.AcceptedAt.IsZero() {
		t.Fatalf("Cancel(queued) = %+v, %v", r, err)
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled {
		t.Fatalf("queued cancel ended %s", st.State)
	}
	v.finish(c1, "", nil)
	// It never ran: a later Work takes the slot and the cancelled one stays so.
	v.settle(o, v.start(o, Echo, "next").ID)
	if n := c2.runs.Load(); n != 0 {
		t.Fatalf("a Work cancelled while queued ran %d times", n)
	}
}

func (s *suite) cancelRunning(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "cr")
	ref, c := v.running(o, Agent, "")
	r, err := v.e.Cancel(o, ref.ID)
	if err != nil || !r.Accepted || r.State != work.StateCancelRequested {
		t.Fatalf("Cancel(running) = %+v, %v", r, err)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("the child's context was not cancelled")
	}
	st, _ := v.settle(o, ref.ID)
	if st.State != work.StateCancelled || st.ResultAvailable {
		t.Fatalf("cancelled child: %+v", st)
	}
	r, err = v.e.Cancel(o, ref.ID)
	if err != nil || r.Accepted || r.State != work.StateCancelled {
		t.Fatalf("Cancel(cancelled) = %+v, %v", r, err)
	}
}

func (s *suite) cancelLosesToCompletion(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "race")
	ref, c := v.running(o, Func, "complete")
	r1, err1 := v.e.Cancel(o, ref.ID)
	// The child does not return before the test finishes it: a repeated
	// cancel lands on cancel-requested Work, accepted, no change.
	r2, err2 := v.e.Cancel(o, ref.ID)
	if err1 != nil || err2 != nil || !r1.Accepted || !r2.Accepted ||
		r1.State != work.StateCancelRequested || r2.State != work.StateCancelRequested {
		t.Fatalf("cancels = %+v %v, %+v %v; want both accepted, cancel-requested", r1, err1, r2, err2)
	}
	if err := <-c.ended; err == nil {
		t.Fatal("the child's context was not cancelled")
	}
	v.finish(c, "finished anyway", nil) // the completion wins the race
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "finished anyway" {
		t.Fatalf("completion after cancel: %s %q, want completed", st.State, out)
	}
	// A cancel after the completion: terminal Work, not accepted.
	r3, err3 := v.e.Cancel(o, ref.ID)
	if err3 != nil || r3.Accepted || r3.State != work.StateCompleted {
		t.Fatalf("cancel after completion = %+v, %v; want not accepted, completed", r3, err3)
	}
}

func (s *suite) cancelUnrelatedFailure(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "fail")
	ref, _ := v.running(o, Func, "fail")
	if _, err := v.e.Cancel(o, ref.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := v.settle(o, ref.ID); st.State != work.StateFailed {
		t.Fatalf("an unrelated failure after cancel: %s, want failed", st.State)
	}
}

func (s *suite) cancelTerminal(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "ct")
	ref := v.start(o, Echo, "x")
	v.settle(o, ref.ID)
	r, err := v.e.Cancel(o, ref.ID)
	if err != nil || r.Accepted || r.State != work.StateCompleted {
		t.Fatalf("Cancel(completed) = %+v, %v", r, err)
	}
	b, _ := json.Marshal(r)
	if !strings.HasPrefix(string(b), `{"workId":"`+ref.ID+`","accepted":false,"state":"completed","acceptedAt":"`) {
		t.Fatalf("cancel receipt JSON = %s", b)
	}
}

func (s *suite) childFailure(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "cf")
	ref, c := v.running(o, Func, "")
	v.finish(c, "partial output", errors.New("the canary failure text"))
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateFailed || out != "" || st.ResultAvailable {
		t.Fatalf("failed child: %+v %q", st, out)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), "canary") || strings.Contains(string(b), "partial") {
		t.Fatalf("status carries failure content: %s", b)
	}
}

func (s *suite) guidanceOrder(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "g")
	ref, c := v.running(o, Agent, "")
	var want []string
	for i := 1; i <= 3; i++ {
		msg := "guidance " + strconv.Itoa(i)
		r, err := v.e.Send(o, ref.ID, "call-"+strconv.Itoa(i), msg)
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
	r, err := v.e.Send(o, ref.ID, "call-4", "guidance 4")
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
	r1, err := v.e.Send(o, ref.ID, "call-1", "once")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := v.e.Send(o, ref.ID, "call-1", "once")
	if err != nil || r2 != r1 {
		t.Fatalf("replayed Send = %+v, %v; want the first receipt %+v", r2, err, r1)
	}
	_, err = v.e.Send(o, ref.ID, "call-1", "other text")
	wantErr(t, "Send(same id, other text)", err, work.ErrConflict)
	// An empty command id is never deduplicated.
	e1, err1 := v.e.Send(o, ref.ID, "", "twice")
	e2, err2 := v.e.Send(o, ref.ID, "", "twice")
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
		st, err := v.e.Status(o, ref.ID)
		return err == nil && st.State.Terminal()
	})
	if r3, err := v.e.Send(o, ref.ID, "call-1", "once"); err != nil || r3 != r1 {
		t.Fatalf("replay after the end = %+v, %v", r3, err)
	}
	_, err = v.e.Send(o, ref.ID, "call-9", "late")
	wantErr(t, "Send(terminal)", err, work.ErrTerminal)
	v.settle(o, ref.ID)
}

func (s *suite) guidanceRefusals(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "gr")
	ref, c := v.running(o, Func, "")
	_, err := v.e.Send(o, ref.ID, "c", "hi")
	wantErr(t, "Send(function child)", err, work.ErrNotAgent)
	_, err = v.e.Send(o, ref.ID, "c", "  \n")
	wantErr(t, "Send(blank)", err, work.ErrEmptyMessage)
	_, err = v.e.Send(o, ref.ID, "c", strings.Repeat("m", work.DefaultMaxMessageBytes+1))
	wantErr(t, "Send(too large)", err, work.ErrMessageTooLarge)
	_, err = v.e.Send(o, "0123456789abcdef0123456789abcdef", "c", "hi")
	wantErr(t, "Send(unknown)", err, work.ErrNotFound)
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
}

func (s *suite) detach(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "d")
	ref, c := v.running(o, Agent, "")
	r, err := v.e.Detach(o, ref.ID)
	if err != nil || r.ID != ref.ID {
		t.Fatalf("Detach = %+v, %v", r, err)
	}
	b, _ := json.Marshal(r)
	if string(b) != `{"id":"`+ref.ID+`","detached":true}` {
		t.Fatalf("detach JSON = %s", b)
	}
	_, err = v.e.Status(o, ref.ID)
	wantErr(t, "Status after Detach", err, work.ErrNotFound)
	_, _, err = v.e.Result(v.ctx, o, ref.ID, 0)
	wantErr(t, "Result after Detach", err, work.ErrNotFound)
	_, err = v.e.Detach(o, ref.ID)
	wantErr(t, "second Detach", err, work.ErrNotFound)
	if l, _ := v.e.List(o); len(l) != 0 {
		t.Fatalf("List after Detach has %d Works", len(l))
	}
	// Execution continues: the child was not cancelled.
	v.finish(c, "detached result", nil)
	if err := <-c.ended; err != nil {
		t.Fatalf("the detached child's context ended: %v", err)
	}
}

func (s *suite) release(t *testing.T) {
	v := s.env(t, func(c *Config) { c.MaxRunning = 1 })
	o := owner(t, "rel")
	ref, c := v.running(o, Func, "")
	queued := v.start(o, Echo, "never")
	v.e.Release(o)
	if err := <-c.ended; err == nil {
		t.Fatal("Release did not cancel the running child")
	}
	for _, id := range []string{ref.ID, queued.ID} {
		_, err := v.e.Status(o, id)
		wantErr(t, "Status after Release", err, work.ErrNotFound)
	}
	if l, err := v.e.List(o); err != nil || len(l) != 0 {
		t.Fatalf("List after Release = %d, %v", len(l), err)
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
	l, err := v.e.List(o)
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
	for i := 0; i < work.MaxListed+2; i++ {
		v.settle(o, v.start(o, Echo, "n").ID)
	}
	if l, _ := v.e.List(o); len(l) != work.MaxListed {
		t.Fatalf("List returned %d, want at most %d", len(l), work.MaxListed)
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
		st, err := v.e.Status(o, unread.ID)
		return err == nil && st.State == work.StateCompleted
	})
	running, rc := v.running(o, Func, "")
	running2, rc2 := v.running(o, Func, "")
	qtoken, qc := newControl(t, "")
	queued := v.start(o, Func, qtoken) // two slots: queued
	if st := v.status(o, queued.ID); st.State != work.StateQueued {
		t.Fatalf("third Work with two slots is %s", st.State)
	}
	rows, more := v.e.Rows(o)
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
	for i := 0; i < work.MaxRows+3; i++ {
		v.settle(o, v.start(o, Echo, "n").ID)
	}
	rows, more = v.e.Rows(o)
	if visible := len(want) + work.MaxRows + 3; len(rows) != work.MaxRows || more != visible-work.MaxRows {
		t.Fatalf("Rows = %d rows, more %d; want %d, %d", len(rows), more, work.MaxRows, visible-work.MaxRows)
	}
}

func (s *suite) foreground(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "fg")
	out, err := v.e.Call(v.ctx, v.spec(o, Echo, "exact foreground output"))
	if err != nil || out != "exact foreground output" {
		t.Fatalf("Call = %q, %v", out, err)
	}
	token, c := newControl(t, "")
	go v.finish(c, "", errors.New("canary failure"))
	_, err = v.e.Call(v.ctx, v.spec(o, Func, token))
	wantErr(t, "Call(failing child)", err, work.ErrChildFailed)
	if strings.Contains(err.Error(), "canary") {
		t.Fatalf("foreground error carries the child's text: %v", err)
	}
	if l, _ := v.e.List(o); len(l) != 0 {
		t.Fatalf("a foreground call is listed: %+v", l)
	}
}

func (s *suite) pool(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "pool")
	err := v.e.SetPool(work.Owner{}, work.Budget{MaxTurns: 1})
	wantErr(t, "SetPool(zero owner)", err, work.ErrInvalidOwner)
	if !s.caps.Pools {
		if err := v.e.SetPool(o, work.Budget{MaxTurns: 3}); err == nil {
			t.Fatal("SetPool on an Engine without pools: no error (a pool it does not enforce)")
		}
		return
	}
	if err := v.e.SetPool(o, work.Budget{MaxTurns: 3}); err != nil {
		t.Fatalf("SetPool: %v", err)
	}
	withBudget := func(label, input string) work.Spec {
		sp := v.spec(o, label, input)
		sp.Budget = work.Budget{MaxTurns: 2}
		return sp
	}
	token, c := newControl(t, "")
	ref, err := v.e.Start(v.ctx, withBudget(Agent, token))
	if err != nil {
		t.Fatalf("Start within the pool: %v", err)
	}
	v.waitStarted(c)
	r := v.boundary(c)
	if r.ok {
		if err := v.e.SetPool(r.scope, work.Budget{MaxTurns: 1}); !errors.Is(err, work.ErrInvalidOwner) {
			t.Fatalf("SetPool(child scope) = %v, want ErrInvalidOwner", err)
		}
	}
	_, err = v.e.Start(v.ctx, withBudget(Echo, "x"))
	wantErr(t, "Start beyond the pool", err, work.ErrBudgetExhausted)
	if l, _ := v.e.List(o); len(l) != 1 {
		t.Fatalf("a refused start registered Work: %d listed", len(l))
	}
	// What the child did not spend is refunded when it settles.
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	if _, err := v.e.Start(v.ctx, withBudget(Echo, "y")); err != nil {
		t.Fatalf("Start after the refund: %v", err)
	}
}

func (s *suite) subscribe(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "sub")
	sub, err := v.e.Subscribe(o, 0)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	_, err = v.e.Subscribe(work.Owner{}, 0)
	wantErr(t, "Subscribe(zero owner)", err, work.ErrInvalidOwner)
	ref := v.start(o, Echo, "notice me")
	select {
	case n := <-sub.C():
		if n.WorkID != ref.ID || n.State != work.StateCompleted || !n.ResultAvailable || n.Target != Echo {
			t.Fatalf("notice = %+v", n)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no completion notice within 60s")
	}
	sub.Close()
	for range sub.C() { // closed: drains and ends
	}
	// Settled: every terminal visible Work, oldest settlement first; Live:
	// whether any visible Work is unfinished.
	if v.e.Live(o) {
		t.Fatal("Live with only settled Work")
	}
	_, c := v.running(o, Func, "")
	if !v.e.Live(o) {
		t.Fatal("not Live with a running Work")
	}
	second := v.start(o, Echo, "second")
	v.eventually("second settled", func() bool {
		st, err := v.e.Status(o, second.ID)
		return err == nil && st.State.Terminal()
	})
	settled, err := v.e.Settled(o)
	if err != nil || len(settled) != 2 || settled[0].Work.ID != ref.ID || settled[1].Work.ID != second.ID {
		t.Fatalf("Settled = %+v, %v; want %s then %s", settled, err, ref.ID, second.ID)
	}
	v.finish(c, "", nil)
	if l, err := v.e.Settled(owner(t, "none")); err != nil || l == nil || len(l) != 0 {
		t.Fatalf("Settled(unknown owner) = %#v, %v", l, err)
	}
}
