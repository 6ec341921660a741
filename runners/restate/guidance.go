package restate

import (
	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// send queues one guidance message (Engine.Send did the checks that need
// no state: owner, empty, size). Its refusals are checked in the
// contract's order: not found, not an agent, conflict, terminal, full.
func (c control) send(ctx restate.ObjectContext, r sendRequest) (sendReply, error) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != r.Owner || s.Detached {
		return sendReply{Error: work.ErrNotFound.Code}, nil
	}
	// The plaintext's size, also of a sealed text (WithContentKeys).
	size := plainLen(r.Text)
	repeat, refusal := s.Check(s.In.Kind, r.Answer, r.Command, r.Digest, size, s.State.Terminal(), s.In.Mailbox)
	switch {
	case refusal != nil:
		return sendReply{Error: refusal.Code}, nil
	case repeat != nil:
		return sendReply{Cursor: repeat.Cursor, At: repeat.At}, nil
	}
	rec := s.Accept(r.Text, size, r.Command, r.Digest, now(ctx), "", s.In.Mailbox.Commands)
	s.answerQuestions()
	restate.Set(ctx, stateKey, s)
	c.rep.emit(s.In, observe.Event{Type: observe.EventGuidanceAccepted, Count: 1, Time: rec.At})
	return sendReply{Cursor: rec.Cursor, At: rec.At}, nil
}

// take is the child's model boundary: it takes the messages queued so far,
// in order (the texts leave Restate's state here), and says whether the
// Work is cancel-requested.
func (c control) take(ctx restate.ObjectContext, _ restate.Void) (takeReply, error) {
	s, ok := load(ctx)
	if !ok {
		return takeReply{}, nil
	}
	r := takeReply{Cancel: s.State == work.StateCancelRequested}
	if len(s.Pending) == 0 {
		return r, nil
	}
	r.Messages = s.Take(-1, plainLen)
	restate.Set(ctx, stateKey, s)
	c.rep.emit(s.In, observe.Event{Type: observe.EventGuidanceDelivered, Count: len(r.Messages), Time: now(ctx)})
	return r, nil
}
