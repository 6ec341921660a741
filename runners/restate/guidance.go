package restate

import (
	restate "github.com/restatedev/sdk-go"

	"github.com/agentwork/agentwork/work"
)

// send queues one guidance message (Engine.Send did the checks that need
// no state: owner, empty, size). Its refusals are checked in the
// contract's order: not found, not an agent, conflict, terminal, full.
func (c control) send(ctx restate.ObjectContext, r sendRequest) (sendReply, error) {
	s, ok := load(ctx)
	if !ok || s.In.Owner != r.Owner || s.Detached {
		return sendReply{Error: work.ErrNotFound.Code}, nil
	}
	if s.In.Kind != work.KindAgent && !r.Answer {
		return sendReply{Error: work.ErrNotAgent.Code}, nil
	}
	if cr, ok := s.Commands[r.Command]; ok && r.Command != "" {
		if cr.Digest != r.Digest {
			return sendReply{Error: work.ErrConflict.Code}, nil
		}
		return cr.Reply, nil
	}
	if s.State.Terminal() {
		return sendReply{Error: work.ErrTerminal.Code}, nil
	}
	m := s.In.Mailbox
	if (m.Messages > 0 && len(s.Pending) >= m.Messages) || (m.Bytes > 0 && s.PendBytes+len(r.Text) > m.Bytes) {
		return sendReply{Error: work.ErrMailboxFull.Code}, nil
	}
	s.Cursor++
	reply := sendReply{Cursor: s.Cursor, At: now(ctx)}
	s.Pending = append(s.Pending, r.Text)
	s.PendBytes += len(r.Text)
	if r.Command != "" {
		if s.Commands == nil {
			s.Commands = map[string]commandRecord{}
		}
		s.Commands[r.Command] = commandRecord{Digest: r.Digest, Reply: reply}
		s.CmdOrder = append(s.CmdOrder, r.Command)
		if n := m.Commands; n > 0 && len(s.CmdOrder) > n {
			delete(s.Commands, s.CmdOrder[0])
			s.CmdOrder = s.CmdOrder[1:]
		}
	}
	s.answerQuestions()
	restate.Set(ctx, stateKey, s)
	c.rep.emit(s.In, work.Event{Type: work.EventGuidanceAccepted, Count: 1, Time: reply.At})
	return reply, nil
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
	r.Messages = s.Pending
	s.Pending, s.PendBytes = nil, 0
	restate.Set(ctx, stateKey, s)
	c.rep.emit(s.In, work.Event{Type: work.EventGuidanceDelivered, Count: len(r.Messages), Time: now(ctx)})
	return r, nil
}
