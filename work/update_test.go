package work_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestUpdatePolicy: defaults and the bounds Spec.Validate refuses.
func TestUpdatePolicy(t *testing.T) {
	if p := driver.ResolveUpdates(work.UpdatePolicy{}); p.MaxUpdates != work.DefaultMaxUpdates ||
		p.MaxBytes != work.DefaultMaxUpdateBytes || p.QuestionTimeout != work.DefaultQuestionTimeout {
		t.Fatalf("ResolveUpdates = %+v", p)
	}
	spec := work.Spec{Owner: work.NewOwner("p"), Target: work.Target{Label: "t", Kind: work.KindFunction}, Run: immediate("")}
	for _, tc := range []struct {
		p  work.UpdatePolicy
		ok bool
	}{
		{work.UpdatePolicy{}, true},
		{work.UpdatePolicy{MaxUpdates: 1024, MaxBytes: 1 << 20, QuestionTimeout: time.Hour}, true},
		{work.UpdatePolicy{MaxUpdates: -1}, false},
		{work.UpdatePolicy{MaxBytes: -1}, false},
		{work.UpdatePolicy{QuestionTimeout: -1}, false},
		{work.UpdatePolicy{MaxUpdates: 1024 + 1}, false},
		{work.UpdatePolicy{MaxBytes: 1<<20 + 1}, false},
	} {
		spec.Updates = &tc.p
		err := spec.Validate()
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, work.ErrInvalidSpec)) {
			t.Errorf("Validate(Updates %+v) = %v", tc.p, err)
		}
	}
}

// TestUpdateRefusalCodes: every refusal is ErrUpdateRefused with its
// reason as Class, and DecodeError restores it.
func TestUpdateRefusalCodes(t *testing.T) {
	for _, r := range []string{observe.UpdateRefusedNotDeclared, observe.UpdateRefusedCount, observe.UpdateRefusedBytes,
		observe.UpdateRefusedEnding, observe.UpdateRefusedConflict, observe.UpdateRefusedInvalid} {
		e := work.UpdateRefusal(r)
		if !errors.Is(e, work.ErrUpdateRefused) || e.Class != r || !strings.Contains(e.Error(), r) {
			t.Fatalf("UpdateRefusal(%q) = %v (class %q)", r, e, e.Class)
		}
		d, ok := work.DecodeError(e.Code, e.Error())
		if !ok || d.Class != r || !errors.Is(d, work.ErrUpdateRefused) {
			t.Fatalf("DecodeError(%q, %q) = %v (class %q), %v", e.Code, e.Error(), d, d.Class, ok)
		}
	}
	if e := work.UpdateRefusal("other"); e != work.ErrUpdateRefused {
		t.Fatalf("UpdateRefusal(unknown) = %v", e)
	}
	if d, ok := work.DecodeError(work.ErrUnanswered.Code, work.ErrUnanswered.Error()); !ok || !errors.Is(d, work.ErrUnanswered) {
		t.Fatalf("DecodeError(unanswered) = %v, %v", d, ok)
	}
}

// startUpdating starts a controlled child of target declaring p.
func (h *harness) startUpdating(o work.Owner, target work.Target, p work.UpdatePolicy, opts ...func(*work.Spec)) (work.Ref, *child) {
	h.t.Helper()
	c := h.child()
	spec := work.Spec{Owner: o, Target: target, Run: c.run, Updates: &p}
	for _, f := range opts {
		f(&spec)
	}
	ref, err := h.s.Start(context.Background(), spec)
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	<-c.started
	return ref, c
}

var agentT = work.Target{Label: "researcher", Kind: work.KindAgent}

// beginAsync calls BeginRequest on the child's Execution and returns the
// channel its error arrives on once it returns.
func beginAsync(ex *work.Execution) chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := boundary.BeginRequest(ex)
		ch <- err
	}()
	return ch
}

func notYet(t *testing.T, ch chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) before it should", what, err)
	default:
	}
}

func within(t *testing.T, ch chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
	return nil
}

// TestQuestionTimeout: on the fake clock, an agent child's open question
// holds its next boundary until the question's timeout (from the
// question's acceptance), then the boundary goes on and Unanswered
// reports it once; the timer is gone.
func TestQuestionTimeout(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	o := work.NewOwner("qt")
	ref, c := h.startUpdating(o, agentT, work.UpdatePolicy{QuestionTimeout: time.Minute})
	base := h.clk.Pending()
	if rec, err := work.ReportUpdate(c.ctx, "q1", []byte(`"first?"`), true); err != nil || rec.Seq != 1 {
		t.Fatalf("question 1 = %+v, %v", rec, err)
	}
	if h.clk.Pending() != base+1 {
		t.Fatalf("the question's timer is not pending (%d timers, %d before)", h.clk.Pending(), base)
	}
	h.clk.Advance(30 * time.Second)
	// A second question joins the open wait: its timeout is the first's.
	if rec, err := work.ReportUpdate(c.ctx, "q2", []byte(`"second?"`), true); err != nil || rec.Seq != 2 {
		t.Fatalf("question 2 = %+v, %v", rec, err)
	}
	if h.clk.Pending() != base+1 {
		t.Fatalf("the second question started a timer of its own (%d timers)", h.clk.Pending())
	}
	ch := beginAsync(c.ex)
	notYet(t, ch, "BeginRequest with a question open")
	h.clk.Advance(30 * time.Second)
	if err := within(t, ch, "BeginRequest after the timeout"); err != nil {
		t.Fatalf("BeginRequest: %v", err)
	}
	if got := boundary.Unanswered(c.ex); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("Unanswered() = %v, want [1 2]", got)
	}
	if got := boundary.Unanswered(c.ex); got != nil {
		t.Fatalf("Unanswered() again = %v", got)
	}
	if g := boundary.Guidance(c.ex); g != nil {
		t.Fatalf("guidance after an unanswered question: %q", g)
	}
	if h.clk.Pending() != base {
		t.Fatalf("%d timers pending after the timeout, want %d", h.clk.Pending(), base)
	}
	// An ordinary boundary does not wait.
	if err := within(t, beginAsync(c.ex), "an ordinary BeginRequest"); err != nil {
		t.Fatal(err)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
}

// TestQuestionAnswered: an answer (Send or Answer) accepted after the
// question ends the wait and stops the timer; guidance accepted before
// it does not answer it.
func TestQuestionAnswered(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	ctx := context.Background()
	o := work.NewOwner("qa")
	ref, c := h.startUpdating(o, agentT, work.UpdatePolicy{})
	base := h.clk.Pending()
	if _, err := h.s.Send(ctx, o, ref.ID, "", "before"); err != nil {
		t.Fatal(err)
	}
	if _, err := work.ReportUpdate(c.ctx, "q", []byte(`"which?"`), true); err != nil {
		t.Fatal(err)
	}
	ch := beginAsync(c.ex)
	notYet(t, ch, "BeginRequest with a question open")
	if _, err := h.s.Answer(ctx, o, ref.ID, "a1", "this one"); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if err := within(t, ch, "BeginRequest after the answer"); err != nil {
		t.Fatal(err)
	}
	if got := boundary.Guidance(c.ex); strings.Join(got, "|") != "before|this one" {
		t.Fatalf("Guidance() = %q", got)
	}
	if got := boundary.Unanswered(c.ex); got != nil {
		t.Fatalf("Unanswered() = %v after an answer", got)
	}
	if h.clk.Pending() != base {
		t.Fatalf("the question's timer outlived its answer (%d pending, want %d)", h.clk.Pending(), base)
	}
	// Answer's idempotency is Send's.
	r1, err1 := h.s.Answer(ctx, o, ref.ID, "a1", "this one")
	_, err2 := h.s.Answer(ctx, o, ref.ID, "a1", "another")
	if err1 != nil || r1.Cursor != "2" || !errors.Is(err2, work.ErrConflict) {
		t.Fatalf("replayed Answer = %+v, %v; conflicting = %v", r1, err1, err2)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
}

// TestQuestionFunctionChild: AwaitAnswer returns the answer, gives up
// with ErrUnanswered after the timeout, returns at once with no question
// open, and ends with ErrCancelled when its context does.
func TestQuestionFunctionChild(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	ctx := context.Background()
	o := work.NewOwner("qf")
	fn := work.Target{Label: "fn", Kind: work.KindFunction}
	ref, c := h.startUpdating(o, fn, work.UpdatePolicy{QuestionTimeout: time.Minute})
	await := func(actx context.Context) chan awaitResult {
		ch := make(chan awaitResult, 1)
		go func() {
			g, err := work.AwaitAnswer(actx)
			ch <- awaitResult{g, err}
		}()
		return ch
	}
	if g, err := work.AwaitAnswer(c.ctx); g != nil || err != nil {
		t.Fatalf("AwaitAnswer with no question = %q, %v", g, err)
	}
	if _, err := work.ReportUpdate(c.ctx, "q1", []byte(`"ok?"`), true); err != nil {
		t.Fatal(err)
	}
	ch := await(c.ctx)
	if _, err := h.s.Send(ctx, o, ref.ID, "", "no"); !errors.Is(err, work.ErrNotAgent) {
		t.Fatalf("Send to a function child = %v", err)
	}
	if _, err := h.s.Answer(ctx, o, ref.ID, "", "yes"); err != nil {
		t.Fatal(err)
	}
	if r := recvAwait(t, ch); r.err != nil || strings.Join(r.g, "|") != "yes" {
		t.Fatalf("AwaitAnswer = %q, %v", r.g, r.err)
	}
	if _, err := work.ReportUpdate(c.ctx, "q2", []byte(`"still?"`), true); err != nil {
		t.Fatal(err)
	}
	ch = await(c.ctx)
	h.clk.Advance(time.Minute)
	if r := recvAwait(t, ch); !errors.Is(r.err, work.ErrUnanswered) || r.g != nil {
		t.Fatalf("AwaitAnswer after the timeout = %q, %v", r.g, r.err)
	}
	if _, err := work.ReportUpdate(c.ctx, "q3", []byte(`"again?"`), true); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(c.ctx)
	ch = await(actx)
	cancel()
	if r := recvAwait(t, ch); !errors.Is(r.err, work.ErrCancelled) {
		t.Fatalf("AwaitAnswer with its context cancelled = %q, %v", r.g, r.err)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
}

func recvAwait(t *testing.T, ch chan awaitResult) awaitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitAnswer did not return")
	}
	return awaitResult{}
}

type awaitResult struct {
	g   []string
	err error
}

// TestQuestionWaitEndsWithWork: the Work's deadline and its cancel end the
// question wait at once, long before the question's timeout, and the
// settled Work keeps no timer.
func TestQuestionWaitEndsWithWork(t *testing.T) {
	for _, how := range []string{"deadline", "cancel"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: time.Hour}))
			o := work.NewOwner("qd")
			ref, c := h.startUpdating(o, agentT, work.UpdatePolicy{QuestionTimeout: 10 * time.Hour},
				func(s *work.Spec) { s.Budget.MaxDuration = time.Minute })
			base := h.clk.Pending()
			if _, err := work.ReportUpdate(c.ctx, "q", []byte(`"?"`), true); err != nil {
				t.Fatal(err)
			}
			ch := beginAsync(c.ex)
			notYet(t, ch, "BeginRequest with a question open")
			if how == "deadline" {
				h.clk.Advance(time.Minute)
			} else if _, err := h.s.Cancel(context.Background(), o, ref.ID); err != nil {
				t.Fatal(err)
			}
			within(t, ch, "BeginRequest once the Work ends")
			if got := boundary.Unanswered(c.ex); got != nil {
				t.Fatalf("Unanswered() = %v: the question did not time out", got)
			}
			c.returnCtxErr()
			h.obs.waitTerminal(ref.ID)
			if n := h.clk.Pending(); n != base-1 { // the deadline's timer is gone too
				t.Fatalf("%d timers pending after the Work settled, want %d (the question's outlived it)", n, base-1)
			}
		})
	}
}

// TestUpdateEventsAndNotices: each decided update is an EventUpdate with
// its size and sequence number; an accepted one is a NoticeUpdate; a
// duplicate is neither; a refusal holds no value.
func TestUpdateEventsAndNotices(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	o := work.NewOwner("ue")
	sub, err := h.s.Subscribe(context.Background(), o, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ref, c := h.startUpdating(o, agentT, work.UpdatePolicy{MaxUpdates: 1})
	v := []byte(`{"note":"` + canary + `"}`)
	if _, err := work.ReportUpdate(c.ctx, "k", v, false); err != nil {
		t.Fatal(err)
	}
	if rec, err := work.ReportUpdate(c.ctx, "k", v, false); err != nil || !rec.Duplicate {
		t.Fatalf("repeat = %+v, %v", rec, err)
	}
	_, err = work.ReportUpdate(c.ctx, "k2", v, true)
	var we *work.Error
	if !errors.As(err, &we) || we.Class != observe.UpdateRefusedCount || strings.Contains(err.Error(), canary) {
		t.Fatalf("over the count: %v", err)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	evs := h.obs.ofType(observe.EventUpdate)
	if len(evs) != 2 || evs[0].Seq != 1 || evs[0].Bytes != len(v) || evs[0].ErrorClass != "" || evs[0].Question ||
		evs[1].Seq != 0 || evs[1].ErrorClass != observe.UpdateRefusedCount || !evs[1].Question || evs[1].WorkID != ref.ID {
		t.Fatalf("EventUpdate events = %+v", evs)
	}
	if dump := fmt.Sprintf("%#v", h.obs.ofType(observe.EventUpdate)); strings.Contains(dump, canary) {
		t.Fatalf("an event carries the update's value: %s", dump)
	}
	n := <-sub.C()
	if n.Kind != work.NoticeUpdate || n.WorkID != ref.ID || n.Seq != 1 || n.Bytes != len(v) || n.State != work.StateRunning {
		t.Fatalf("first notice = %+v", n)
	}
	if n := <-sub.C(); n.Kind != work.NoticeSettled {
		t.Fatalf("second notice = %+v, want the settlement (the duplicate and the refusal have none)", n)
	}
}

// TestUpdateNoticeLeavesSettlement: update notices fill a buffer, and the
// settlement takes the place of the oldest.
func TestUpdateNoticeLeavesSettlement(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	o := work.NewOwner("un")
	sub, err := h.s.Subscribe(context.Background(), o, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	_, c := h.startUpdating(o, agentT, work.UpdatePolicy{})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := work.ReportUpdate(c.ctx, k, []byte(`0`), false); err != nil {
			t.Fatal(err)
		}
	}
	c.complete("")
	// Close returns once every child's goroutine has delivered its Work's
	// last events and notices (the terminal event comes before the
	// settlement notice, so waiting for the event alone reads the buffer
	// too early); the closed channel still yields what it buffered.
	if err := h.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n1, n2 := <-sub.C(), <-sub.C()
	if n1.Kind != work.NoticeUpdate || n1.Seq != 2 || n2.Kind != work.NoticeSettled || sub.Dropped() != 2 {
		t.Fatalf("buffer = %+v, %+v, dropped %d; want update 2 then the settlement, 2 dropped", n1, n2, sub.Dropped())
	}
}

// TestUpdatesOutsideWork: a foreground call's updates, and those outside
// any child, are refused with not_declared; the foreground one is still
// an event.
func TestUpdatesOutsideWork(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	if _, err := work.ReportUpdate(context.Background(), "k", []byte(`1`), false); !isRefusal(err, observe.UpdateRefusedNotDeclared) {
		t.Fatalf("outside a child: %v", err)
	}
	var nilEx *work.Execution
	if g, err := work.AwaitAnswer(context.Background()); g != nil || err != nil || boundary.Unanswered(nilEx) != nil {
		t.Fatalf("AwaitAnswer outside a child = %q, %v", g, err)
	}
	var got error
	_, err := h.s.Call(context.Background(), work.Spec{Owner: work.NewOwner("fg"), Target: agentT,
		Updates: &work.UpdatePolicy{}, Run: func(ctx context.Context) (string, error) {
			_, got = work.ReportUpdate(ctx, "k", []byte(`1`), true)
			return "ok", nil
		}})
	if err != nil || !isRefusal(got, observe.UpdateRefusedNotDeclared) {
		t.Fatalf("Call: %v; the foreground update: %v", err, got)
	}
	evs := h.obs.ofType(observe.EventUpdate)
	if len(evs) != 1 || evs[0].ErrorClass != observe.UpdateRefusedNotDeclared || evs[0].WorkID != "" || !evs[0].Question {
		t.Fatalf("foreground EventUpdate = %+v", evs)
	}
	// A Work that declares none: refused, and no updates to read.
	o := work.NewOwner("nd")
	ref, c := h.running(o, agentT)
	if _, err := work.ReportUpdate(c.ctx, "k", []byte(`1`), false); !isRefusal(err, observe.UpdateRefusedNotDeclared) {
		t.Fatalf("undeclared: %v", err)
	}
	if us, err := h.s.Updates(context.Background(), o, ref.ID, 0); err != nil || us == nil || len(us) != 0 {
		t.Fatalf("Updates = %v, %v", us, err)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	if _, err := (&work.Engine{}).Updates(context.Background(), o, ref.ID, 0); !errors.Is(err, work.ErrNotInitialized) {
		t.Fatalf("an uninitialized Engine's Updates = %v", err)
	}
}

func isRefusal(err error, reason string) bool {
	var we *work.Error
	return errors.Is(err, work.ErrUpdateRefused) && errors.As(err, &we) && we.Class == reason
}

// TestUpdateAfterSettled: a goroutine the child left behind reports after
// the Work settled: refused with ending, and no event follows the
// terminal one.
func TestUpdateAfterSettled(t *testing.T) {
	h := newHarness(t, work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	o := work.NewOwner("late")
	ref, c := h.startUpdating(o, agentT, work.UpdatePolicy{})
	if _, err := work.ReportUpdate(c.ctx, "k", []byte(`1`), false); err != nil {
		t.Fatal(err)
	}
	c.complete("")
	h.obs.waitTerminal(ref.ID)
	if _, err := work.ReportUpdate(c.ctx, "k2", []byte(`2`), false); !isRefusal(err, observe.UpdateRefusedEnding) {
		t.Fatalf("an update after the end: %v", err)
	}
	if rec, err := work.ReportUpdate(c.ctx, "k", []byte(`1`), false); err != nil || !rec.Duplicate || rec.Seq != 1 {
		t.Fatalf("a repeat after the end = %+v, %v", rec, err)
	}
	evs := h.obs.events(ref.ID)
	if terminalIndex(evs) != len(evs)-1 {
		t.Fatalf("an event follows the terminal one: %v", eventTypes(evs))
	}
	if n := len(h.obs.ofType(observe.EventUpdate)); n != 1 {
		t.Fatalf("%d EventUpdate events, want the one before the end", n)
	}
	if us, err := h.s.Updates(context.Background(), o, ref.ID, 0); err != nil || len(us) != 1 {
		t.Fatalf("Updates after the end = %v, %v", us, err)
	}
}
