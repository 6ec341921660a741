package work

import (
	"context"

	"github.com/agentwork/agentwork/work/observe"
)

// The child side of updates and questions: what a child reports and waits
// for through its Execution.

// ErrUpdateRefused: an update the child reported was refused; its Class
// is the reason (an observe.UpdateRefused* constant), and errors.Is matches every
// reason. Nothing of a refused update is kept.
var ErrUpdateRefused = newError("update_refused", "update refused")

// ErrUnanswered: a function child's question (AwaitAnswer) had no answer
// within UpdatePolicy.QuestionTimeout.
var ErrUnanswered = newError("unanswered", "the question was not answered in time")

// updateRefusals are ErrUpdateRefused by reason, registered so that
// work/driver's DecodeError restores the reason (Class) from the message.
var updateRefusals = func() map[string]*Error {
	m := make(map[string]*Error)
	for _, r := range []string{observe.UpdateRefusedNotDeclared, observe.UpdateRefusedCount, observe.UpdateRefusedBytes,
		observe.UpdateRefusedEnding, observe.UpdateRefusedConflict, observe.UpdateRefusedInvalid, observe.UpdateRefusedUnavailable} {
		e := newError(ErrUpdateRefused.Code, "update refused ("+r+")")
		e.Class = r
		m[r] = e
	}
	return m
}()

// updateRefusal returns the ErrUpdateRefused of reason (an observe.UpdateRefused*
// constant; Class is reason): the refusal an update log decided
// (work/driver's UpdateRefusal).
func updateRefusal(reason string) *Error {
	if e := updateRefusals[reason]; e != nil {
		return e
	}
	return ErrUpdateRefused
}

// ReportUpdate reports one update of the Work of the child whose context
// ctx is (or is derived from): value is its
// encoded payload (valid JSON), key its idempotency key (the tool-call id,
// or one the child chose), and question asks the supervisor a question.
// It returns the update's receipt at once, or ErrUpdateRefused whose Class
// is the reason (the Work's update log decides, in its order, as
// work/driver's UpdateLog.Accept documents; a Work that is
// cancel-requested or settling refuses with observe.UpdateRefusedEnding). A
// refused update is refused before it is accepted and changes nothing;
// an accepted one is never dropped: it stays readable with Updates until
// the Work's record is evicted. A repeat of an accepted key with the same
// value returns the first receipt (Duplicate set) and reports nothing new.
//
// Each update decided is an observe.EventUpdate (ErrorClass the refusal reason, ""
// when accepted; its size and sequence number, never its value), except
// one reported after the Work settled (a goroutine the child left behind:
// refused, and its events have ended), and an accepted one is a
// NoticeUpdate to the owner's Subscriptions.
//
// A foreground call (Engine.Call) has no Work to read updates from:
// its updates are refused with observe.UpdateRefusedNotDeclared (an observe.EventUpdate
// still reports each), and so are those of a Work whose Spec declares
// none. Under another Engine (work/driver's WithRemote) its hooks decide.
//
// Outside a child (no Execution in ctx) it is refused with
// observe.UpdateRefusedNotDeclared.
func ReportUpdate(ctx context.Context, key string, value []byte, question bool) (UpdateReceipt, error) {
	e, _ := ExecutionFrom(ctx)
	if e == nil || e.run() == nil {
		return UpdateReceipt{}, updateRefusal(observe.UpdateRefusedNotDeclared)
	}
	return e.rt.reportUpdate(key, value, question)
}

// AwaitAnswer is how a function child waits for the answer to its
// question (ctx is the child's context, or one derived from it): it
// blocks until guidance arrives for the Work (Engine.Answer) and
// returns it, drained as work/boundary's Guidance drains it. With no answer within the
// question's timeout it returns ErrUnanswered, and ErrCancelled when ctx
// ends first. With no question open it returns at
// once with the guidance waiting (nil when there is none). An agent child
// does not call it: its next boundary.BeginRequest waits instead. Outside a child
// it returns nil and no error.
func AwaitAnswer(ctx context.Context) ([]string, error) {
	e, _ := ExecutionFrom(ctx)
	if e == nil || e.run() == nil {
		return nil, nil
	}
	return e.rt.awaitAnswer(ctx)
}

// unanswered is work/boundary's Unanswered (which documents it).
func (e *Execution) unanswered() []int {
	if e == nil || e.rt == nil {
		return nil
	}
	return e.rt.takeUnanswered()
}
