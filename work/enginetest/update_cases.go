package enginetest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// updates checks children that talk back (Spec.Updates; Updates,
// Answer): bounded, ordered updates by cursor, idempotency, owner
// isolation, and questions answered by guidance or left unanswered. An
// Engine without updates (its Updates answers errors.ErrUnsupported) must
// refuse a Spec that declares updates (ErrInvalidSpec), never run it and
// drop them.
func (s *suite) updates(t *testing.T) {
	v := s.env(t, nil)
	if _, err := v.e.Updates(v.ctx, work.NewOwner("capabilities"), "", 0); errors.Is(err, errors.ErrUnsupported) {
		spec := v.spec(owner(t, "noupdates"), Echo, "x")
		spec.Updates = &work.UpdatePolicy{}
		_, err := v.e.Start(v.ctx, spec)
		wantErr(t, "Start(Updates) on an Engine without updates", err, work.ErrInvalidSpec)
		return
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Order", s.updateOrder},
		{"Bounds", s.updateBounds},
		{"Idempotency", s.updateIdempotency},
		{"OwnerIsolation", s.updateOwnerIsolation},
		{"NotDeclared", s.updateNotDeclared},
		{"Ending", s.updateEnding},
		{"AfterEnd", s.updateAfterEnd},
		{"QuestionAgent", s.questionAgent},
		{"QuestionFunction", s.questionFunction},
		{"QuestionTimeout", s.questionTimeout},
		{"QuestionCancel", s.questionCancel},
		{"Notice", s.updateNotice},
		{"NoContent", s.updateNoContent},
	} {
		t.Run(tc.name, tc.run)
	}
}

// reporting starts a controlled child whose Spec declares updates with p
// and waits until it runs.
func (v *env) reporting(o work.Owner, label, onCancel string, p work.UpdatePolicy) (work.Ref, *control) {
	v.t.Helper()
	token, c := newControl(v.t, onCancel)
	spec := v.spec(o, label, token)
	spec.Updates = &p
	ref, err := v.e.Start(v.ctx, spec)
	if err != nil {
		v.t.Fatalf("Start(%s, Updates): %v", label, err)
	}
	v.waitStarted(c)
	return ref, c
}

// report has the controlled child report one update.
func (v *env) report(c *control, key, value string, question bool) (work.UpdateReceipt, error) {
	v.t.Helper()
	reply := make(chan updateReply, 1)
	select {
	case c.update <- updateReq{key: key, value: []byte(value), question: question, reply: reply}:
	case <-time.After(patience):
		v.t.Fatalf("the child did not take the update within %s", patience)
	}
	r := <-reply
	return r.rec, r.err
}

// accepted has the child report an update that must be accepted with seq.
func (v *env) accepted(c *control, key, value string, question bool, seq int) {
	v.t.Helper()
	rec, err := v.report(c, key, value, question)
	if err != nil || rec.Seq != seq || rec.Duplicate {
		v.t.Fatalf("update %s = %+v, %v; want seq %d accepted", key, rec, err, seq)
	}
}

// refused checks that err is ErrUpdateRefused with reason.
func refused(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var e *work.Error
	if !errors.Is(err, work.ErrUpdateRefused) || !errors.As(err, &e) || e.Class != reason {
		t.Fatalf("%s: err = %v, want an update refused (%s)", what, err, reason)
	}
}

// readUpdates reads o's Work id's updates after cursor.
func (v *env) readUpdates(o work.Owner, id string, after int) []work.Update {
	v.t.Helper()
	us, err := v.e.Updates(v.ctx, o, id, after)
	if err != nil {
		v.t.Fatalf("Updates(%s, after %d): %v", id, after, err)
	}
	if us == nil {
		v.t.Fatalf("Updates(%s, after %d) = nil, want a non-nil slice", id, after)
	}
	return us
}

// seqs describes updates as seq:key=value.
func seqs(us []work.Update) string {
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s=%s", u.Seq, u.Key, u.Value)
		if u.Question {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// updateEvents returns the Work's EventUpdate events once it is terminal.
func (v *env) updateEvents(id string) []observe.Event {
	v.t.Helper()
	var evs []observe.Event
	v.eventually("the terminal event of "+id, func() bool {
		evs = byWork(v.rec.Events())[id]
		return hasTerminal(evs)
	})
	var out []observe.Event
	for _, e := range evs {
		if e.Type == observe.EventUpdate {
			out = append(out, e)
		}
	}
	return out
}

func (s *suite) updateOrder(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "uo")
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{})
	for i := 1; i <= 3; i++ {
		v.accepted(c, "k"+strconv.Itoa(i), `{"n":`+strconv.Itoa(i)+`}`, false, i)
	}
	if got, want := seqs(v.readUpdates(o, ref.ID, 0)), `1:k1={"n":1} 2:k2={"n":2} 3:k3={"n":3}`; got != want {
		t.Fatalf("Updates(after 0) = %s, want %s", got, want)
	}
	if got, want := seqs(v.readUpdates(o, ref.ID, 2)), `3:k3={"n":3}`; got != want {
		t.Fatalf("Updates(after 2) = %s, want %s", got, want)
	}
	if got := v.readUpdates(o, ref.ID, 3); len(got) != 0 {
		t.Fatalf("Updates(after 3) = %s, want none", seqs(got))
	}
	if got := v.readUpdates(o, ref.ID, -5); len(got) != 3 {
		t.Fatalf("Updates(after -5) = %s, want all three", seqs(got))
	}
	for _, u := range v.readUpdates(o, ref.ID, 0) {
		if u.Time.IsZero() {
			t.Fatalf("update %d has no time", u.Seq)
		}
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	evs := v.updateEvents(ref.ID)
	if len(evs) != 3 {
		t.Fatalf("%d EventUpdate events, want 3\n%s", len(evs), describe(evs))
	}
	for i, e := range evs {
		if e.Seq != i+1 || e.Bytes != len(`{"n":1}`) || e.ErrorClass != "" || e.Question {
			t.Fatalf("EventUpdate %d = seq %d bytes %d class %q question %v", i, e.Seq, e.Bytes, e.ErrorClass, e.Question)
		}
	}
}

func (s *suite) updateBounds(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "ub")
	ref, c := v.reporting(o, Func, "", work.UpdatePolicy{MaxUpdates: 2})
	v.accepted(c, "a", `"one"`, false, 1)
	v.accepted(c, "b", `"two"`, false, 2)
	_, err := v.report(c, "c", `"three"`, false)
	refused(t, "the update over MaxUpdates", err, observe.UpdateRefusedCount)
	if got, want := seqs(v.readUpdates(o, ref.ID, 0)), `1:a="one" 2:b="two"`; got != want {
		t.Fatalf("after a count refusal Updates = %s, want %s", got, want)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)

	ref2, c2 := v.reporting(o, Agent, "", work.UpdatePolicy{MaxBytes: 16})
	v.accepted(c2, "a", `"0123456789"`, false, 1) // 12 bytes
	_, err = v.report(c2, "b", `"0123"`, false)   // 6 more: 18 > 16
	refused(t, "the update over MaxBytes", err, observe.UpdateRefusedBytes)
	v.accepted(c2, "c", `"01"`, false, 2) // 4 more: 16, within the bound
	if got, want := seqs(v.readUpdates(o, ref2.ID, 0)), `1:a="0123456789" 2:c="01"`; got != want {
		t.Fatalf("after a bytes refusal Updates = %s, want %s", got, want)
	}
	v.finish(c2, "", nil)
	v.settle(o, ref2.ID)
	evs := v.updateEvents(ref2.ID)
	if len(evs) != 3 || evs[0].ErrorClass != "" || evs[1].ErrorClass != observe.UpdateRefusedBytes || evs[1].Seq != 0 ||
		evs[2].ErrorClass != "" || evs[2].Seq != 2 {
		t.Fatalf("EventUpdate events: want accepted, refused (bytes), accepted\n%s", describe(evs))
	}

	// Bad specs: a negative bound or one over its documented ceiling (1,024
	// updates, 1 MiB).
	for _, p := range []work.UpdatePolicy{{MaxUpdates: -1}, {MaxBytes: 1<<20 + 1},
		{MaxUpdates: 1024 + 1}, {QuestionTimeout: -time.Second}} {
		spec := v.spec(o, Echo, "x")
		spec.Updates = &p
		_, err := v.e.Start(v.ctx, spec)
		wantErr(t, fmt.Sprintf("Start(Updates %+v)", p), err, work.ErrInvalidSpec)
	}
}

func (s *suite) updateIdempotency(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "ui")
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{MaxUpdates: 2})
	v.accepted(c, "call-1", `{"a":1}`, false, 1)
	v.accepted(c, "call-2", `{"b":2}`, false, 2)
	// A retry with the same key and payload is the first update, even
	// though the Work's updates are at their bound.
	rec, err := v.report(c, "call-1", `{"a":1}`, false)
	if err != nil || rec.Seq != 1 || !rec.Duplicate {
		t.Fatalf("the retried update = %+v, %v; want seq 1, duplicate", rec, err)
	}
	_, err = v.report(c, "call-1", `{"a":2}`, false)
	refused(t, "the same key with another payload", err, observe.UpdateRefusedConflict)
	_, err = v.report(c, "", `{"a":1}`, false)
	refused(t, "an empty key", err, observe.UpdateRefusedInvalid)
	_, err = v.report(c, "call-3", `{"a":`, false)
	refused(t, "a payload that is not JSON", err, observe.UpdateRefusedInvalid)
	if got, want := seqs(v.readUpdates(o, ref.ID, 0)), `1:call-1={"a":1} 2:call-2={"b":2}`; got != want {
		t.Fatalf("Updates = %s, want %s", got, want)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	var classes []string
	for _, e := range v.updateEvents(ref.ID) {
		classes = append(classes, e.ErrorClass)
	}
	// The duplicate reports nothing new.
	if got, want := strings.Join(classes, ","), ",,conflict,invalid,invalid"; got != want {
		t.Fatalf("EventUpdate classes = %q, want %q", got, want)
	}
}

func (s *suite) updateOwnerIsolation(t *testing.T) {
	v := s.env(t, nil)
	o, other := owner(t, "uiso"), owner(t, "uiso-other")
	ref, c := v.reporting(o, Func, "", work.UpdatePolicy{})
	v.accepted(c, "k", `"mine"`, false, 1)
	_, err := v.e.Updates(v.ctx, other, ref.ID, 0)
	wantErr(t, "Updates(another owner)", err, work.ErrNotFound)
	_, err = v.e.Answer(v.ctx, other, ref.ID, "c", "hi")
	wantErr(t, "Answer(another owner)", err, work.ErrNotFound)
	_, err = v.e.Updates(v.ctx, o, "0123456789abcdef0123456789abcdef", 0)
	wantErr(t, "Updates(unknown)", err, work.ErrNotFound)
	_, err = v.e.Updates(v.ctx, work.Owner{}, ref.ID, 0)
	wantErr(t, "Updates(zero owner)", err, work.ErrInvalidOwner)
	_, err = v.e.Answer(v.ctx, o, ref.ID, "c", " ")
	wantErr(t, "Answer(blank)", err, work.ErrEmptyMessage)
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	_, err = v.e.Answer(v.ctx, o, ref.ID, "c", "late")
	wantErr(t, "Answer(terminal)", err, work.ErrTerminal)

	// A detached Work's updates are its owner's no more.
	ref2, c2 := v.reporting(o, Agent, "", work.UpdatePolicy{})
	v.accepted(c2, "k", `"x"`, false, 1)
	if _, err := v.e.Detach(v.ctx, o, ref2.ID); err != nil {
		t.Fatalf("Detach: %v", err)
	}
	_, err = v.e.Updates(v.ctx, o, ref2.ID, 0)
	wantErr(t, "Updates(detached)", err, work.ErrNotFound)
	v.finish(c2, "", nil)
}

func (s *suite) updateNotDeclared(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "und")
	ref, c := v.running(o, Agent, "")
	_, err := v.report(c, "k", `"x"`, false)
	refused(t, "an update of a Work that declares none", err, observe.UpdateRefusedNotDeclared)
	if got := v.readUpdates(o, ref.ID, 0); len(got) != 0 {
		t.Fatalf("Updates = %s, want none", seqs(got))
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	evs := v.updateEvents(ref.ID)
	if len(evs) != 1 || evs[0].ErrorClass != observe.UpdateRefusedNotDeclared {
		t.Fatalf("want one refused EventUpdate (not_declared)\n%s", describe(evs))
	}
}

func (s *suite) updateEnding(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "uend")
	ref, c := v.reporting(o, Agent, "complete", work.UpdatePolicy{})
	v.accepted(c, "k1", `1`, false, 1)
	if _, err := v.e.Cancel(v.ctx, o, ref.ID); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	select {
	case <-c.ended:
	case <-time.After(patience):
		t.Fatalf("the cancel did not reach the child within %s", patience)
	}
	_, err := v.report(c, "k2", `2`, false)
	refused(t, "an update of a cancel-requested Work", err, observe.UpdateRefusedEnding)
	v.finish(c, "done anyway", nil)
	v.settle(o, ref.ID)
	if got := seqs(v.readUpdates(o, ref.ID, 0)); got != "1:k1=1" {
		t.Fatalf("Updates = %s, want the one accepted before the cancel", got)
	}
}

func (s *suite) updateAfterEnd(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "uae")
	ref, c := v.reporting(o, Func, "", work.UpdatePolicy{})
	v.accepted(c, "k1", `{"step":"read"}`, false, 1)
	v.accepted(c, "k2", `{"step":"write"}`, false, 2)
	v.finish(c, "out", nil)
	if st, out := v.settle(o, ref.ID); st.State != work.StateCompleted || out != "out" {
		t.Fatalf("settled %s %q", st.State, out)
	}
	if got, want := seqs(v.readUpdates(o, ref.ID, 1)), `2:k2={"step":"write"}`; got != want {
		t.Fatalf("Updates after the end = %s, want %s", got, want)
	}
}

// begin has the controlled agent child take a boundary through
// BeginRequest, and returns the channel its reply arrives on.
func (v *env) begin(c *control) chan beginReply {
	v.t.Helper()
	reply := make(chan beginReply, 1)
	select {
	case c.begin <- reply:
	case <-time.After(patience):
		v.t.Fatalf("the child did not take the boundary within %s", patience)
	}
	return reply
}

func (v *env) waitReply(ch chan beginReply, within time.Duration) beginReply {
	v.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		v.t.Fatalf("the boundary did not go on within %s", within)
	}
	return beginReply{}
}

func (s *suite) questionAgent(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "qa")
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{})
	// Guidance sent before the question does not answer it.
	if _, err := v.e.Send(v.ctx, o, ref.ID, "early", "before the question"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	v.accepted(c, "q1", `{"question":"which source?"}`, true, 1)
	ch := v.begin(c)
	select {
	case r := <-ch:
		t.Fatalf("the boundary went on before the question was answered: %+v", r)
	default:
	}
	// The coordinator's send answers an agent child.
	if _, err := v.e.Send(v.ctx, o, ref.ID, "answer-1", "use the archive"); err != nil {
		t.Fatalf("Send(answer): %v", err)
	}
	r := v.waitReply(ch, patience)
	if r.err != nil || len(r.unanswered) != 0 || strings.Join(r.guidance, "|") != "before the question|use the archive" {
		t.Fatalf("the boundary after the answer = %+v", r)
	}
	// The application's Answer answers an agent child too.
	v.accepted(c, "q2", `"and then?"`, true, 2)
	if _, err := v.e.Answer(v.ctx, o, ref.ID, "answer-2", "stop there"); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	r = v.waitReply(v.begin(c), patience)
	if r.err != nil || len(r.unanswered) != 0 || strings.Join(r.guidance, "|") != "stop there" {
		t.Fatalf("the boundary after Answer = %+v", r)
	}
	// With no question open the boundary does not wait.
	r = v.waitReply(v.begin(c), patience)
	if r.err != nil || len(r.guidance) != 0 {
		t.Fatalf("an ordinary boundary = %+v", r)
	}
	if got := seqs(v.readUpdates(o, ref.ID, 0)); got != `1:q1={"question":"which source?"}? 2:q2="and then?"?` {
		t.Fatalf("Updates = %s", got)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	evs := v.updateEvents(ref.ID)
	if len(evs) != 2 || !evs[0].Question || !evs[1].Question {
		t.Fatalf("want two question EventUpdate events\n%s", describe(evs))
	}
}

func (s *suite) questionFunction(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "qf")
	ref, c := v.reporting(o, Func, "", work.UpdatePolicy{})
	v.accepted(c, "q", `"may I?"`, true, 1)
	reply := make(chan awaitReply, 1)
	select {
	case c.await <- reply:
	case <-time.After(patience):
		t.Fatalf("the child did not take the await within %s", patience)
	}
	// send still refuses a function child; Answer does not.
	_, err := v.e.Send(v.ctx, o, ref.ID, "s", "yes")
	wantErr(t, "Send(function child)", err, work.ErrNotAgent)
	if _, err := v.e.Answer(v.ctx, o, ref.ID, "a", "yes"); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	select {
	case r := <-reply:
		if r.err != nil || strings.Join(r.guidance, "|") != "yes" {
			t.Fatalf("AwaitAnswer = %q, %v; want the answer", r.guidance, r.err)
		}
	case <-time.After(patience):
		t.Fatalf("AwaitAnswer did not return within %s of the answer", patience)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
}

func (s *suite) questionTimeout(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "qt")
	const timeout = 200 * time.Millisecond
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{QuestionTimeout: timeout})
	v.accepted(c, "k", `"progress"`, false, 1)
	v.accepted(c, "q", `"anyone?"`, true, 2)
	r := v.waitReply(v.begin(c), patience)
	if r.err != nil || len(r.guidance) != 0 || len(r.unanswered) != 1 || r.unanswered[0] != 2 {
		t.Fatalf("the boundary after the timeout = %+v; want question 2 unanswered", r)
	}
	if r.waited < timeout/2 {
		t.Fatalf("the boundary waited %s for the question, want about %s", r.waited, timeout)
	}
	// The next boundary reports nothing again and does not wait.
	if r := v.waitReply(v.begin(c), patience); len(r.unanswered) != 0 {
		t.Fatalf("a later boundary reports %v unanswered again", r.unanswered)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)

	ref2, c2 := v.reporting(o, Func, "", work.UpdatePolicy{QuestionTimeout: timeout})
	v.accepted(c2, "q", `"anyone?"`, true, 1)
	reply := make(chan awaitReply, 1)
	c2.await <- reply
	select {
	case r := <-reply:
		if !errors.Is(r.err, work.ErrUnanswered) || r.guidance != nil {
			t.Fatalf("AwaitAnswer after the timeout = %q, %v; want ErrUnanswered", r.guidance, r.err)
		}
	case <-time.After(patience):
		t.Fatalf("AwaitAnswer did not give up within %s", patience)
	}
	v.finish(c2, "", nil)
	v.settle(o, ref2.ID)
}

func (s *suite) questionCancel(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "qc")
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{QuestionTimeout: time.Hour})
	v.accepted(c, "q", `"?"`, true, 1)
	ch := v.begin(c)
	if _, err := v.e.Cancel(v.ctx, o, ref.ID); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	// The cancel ends the wait promptly (the question's timeout is an
	// hour): the boundary goes on and the child returns.
	v.waitReply(ch, patience)
	if st, _ := v.settle(o, ref.ID); st.State != work.StateCancelled {
		t.Fatalf("a Work cancelled during its question wait is %s", st.State)
	}
}

func (s *suite) updateNotice(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "un")
	sub, err := v.e.Subscribe(v.ctx, o, 2)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	ref, c := v.reporting(o, Func, "", work.UpdatePolicy{})
	v.accepted(c, "k1", `"abc"`, false, 1)
	n := v.notice(sub, work.NoticeUpdate, ref.ID)
	if n.Seq != 1 || n.Bytes != len(`"abc"`) || n.Target != Func || n.Time.IsZero() {
		t.Fatalf("the update notice = %+v", n)
	}
	// A full buffer of update notices: the settlement still gets in.
	for i := 2; i <= 5; i++ {
		v.accepted(c, "k"+strconv.Itoa(i), `"abc"`, false, i)
	}
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	n = v.notice(sub, work.NoticeSettled, ref.ID)
	if n.State != work.StateCompleted {
		t.Fatalf("the settlement notice = %+v", n)
	}
	if sub.Dropped() == 0 {
		t.Fatal("no notice was dropped from a buffer of 2 after 5 notices")
	}
}

func (s *suite) updateNoContent(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "uc")
	ref, c := v.reporting(o, Agent, "", work.UpdatePolicy{QuestionTimeout: 100 * time.Millisecond})
	v.accepted(c, "k", `{"note":"`+canary+`"}`, false, 1)
	v.accepted(c, "q", `{"question":"`+canary+`"}`, true, 2)
	_, err := v.report(c, "k", `{"note":"`+canary+` other"}`, false)
	refused(t, "a conflicting update", err, observe.UpdateRefusedConflict)
	if _, err := v.e.Answer(v.ctx, o, ref.ID, "a", "answer "+canary); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	v.waitReply(v.begin(c), patience)
	v.finish(c, "", nil)
	v.settle(o, ref.ID)
	if dump := fmt.Sprintf("%#v", v.rec.Events()); strings.Contains(dump, canary) {
		t.Errorf("an Observer event carries an update value or an answer: %s", canaryContext(dump))
	}
	if dump := fmt.Sprintf("%#v", v.rec.Calls()); strings.Contains(dump, canary) {
		t.Errorf("an Observer call carries an update value or an answer: %s", canaryContext(dump))
	}
	if err != nil && strings.Contains(err.Error(), canary) {
		t.Errorf("a refusal's message carries the update's value: %v", err)
	}
}
