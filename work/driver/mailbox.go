package driver

import (
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/sendcheck"
	"github.com/agentwork/agentwork/work/observe"
)

// Mailbox is a durable Work's guidance mailbox, written as plain state
// and deterministic methods (no clock, no I/O), so that a Temporal
// workflow and a Restate object both keep and replay it: the messages
// queued until the child takes them (T is what a runner keeps of one:
// its text, or a reference to where the text is held), their total size,
// the cursor of the last accepted one, and the command records that make
// a repeated Send answer as the first (the newest MailboxLimits.Commands
// kept). Its JSON field names are the runners' stored state's. The zero
// value is an empty mailbox.
type Mailbox[T any] struct {
	Pending   []T `json:",omitempty"`
	PendBytes int `json:",omitempty"`
	Cursor    int `json:",omitempty"`
	// Commands are the command records by command id digest; CmdOrder
	// their order of acceptance, oldest first.
	Commands map[string]Command `json:",omitempty"`
	CmdOrder []string           `json:",omitempty"`
}

// MailboxLimits bound a Work's mailbox: queued messages and their bytes
// (work.WithGuidanceQueue) and command records (work.WithCommandRecords);
// 0 is no bound.
type MailboxLimits struct{ Messages, Bytes, Commands int }

// Command is a command record: the digest of the text the command sent
// and the receipt it was answered with.
type Command struct {
	Digest string
	Reply  Receipt
}

// Receipt is an accepted message's receipt: its cursor, when it was
// accepted, and the runner's reference to its text ("" when it keeps the
// text itself).
type Receipt struct {
	Cursor int
	At     time.Time
	Ref    string `json:",omitempty"`
}

// Check decides a message before it is queued, after the owner's check (a
// Work not visible to the sender is work.ErrNotFound, the runner's): a
// message to a child that is not an agent unless it answers
// (work.ErrNotAgent), a repeated command with another text
// (work.ErrConflict), a terminal Work (work.ErrTerminal), a full mailbox
// (work.ErrMailboxFull), in the contract's order (the in-process engine's
// too: work/internal/sendcheck decides, over this mailbox's facts; a limit
// of 0 is no bound). A repeated command with the same text is no refusal:
// repeat is its first receipt, and nothing is queued again (Accept is not
// called).
func (m *Mailbox[T]) Check(kind observe.Kind, answer bool, command, digest string, bytes int, terminal bool, l MailboxLimits) (repeat *Receipt, err *work.Error) {
	c, recorded := m.Commands[command]
	v := sendcheck.Of(sendcheck.Facts{
		NotAgent:  kind != work.KindAgent && !answer,
		Recorded:  recorded && command != "",
		OtherText: c.Digest != digest,
		Terminal:  terminal,
		Full:      (l.Messages > 0 && len(m.Pending) >= l.Messages) || (l.Bytes > 0 && m.PendBytes+bytes > l.Bytes),
	})
	switch v {
	case sendcheck.Accept:
		return nil, nil
	case sendcheck.Repeat:
		return &c.Reply, nil
	}
	return nil, sendcheck.Err(v).(*work.Error) // work registers a *work.Error for every refusal

}

// Accept queues msg, bytes long, as the next message (Check passed) and
// returns its receipt; a command ("": none) keeps the receipt in its
// record, the oldest record dropped beyond maxCommands.
func (m *Mailbox[T]) Accept(msg T, bytes int, command, digest string, at time.Time, ref string, maxCommands int) Receipt {
	m.Cursor++
	r := Receipt{Cursor: m.Cursor, At: at, Ref: ref}
	m.Pending = append(m.Pending, msg)
	m.PendBytes += bytes
	if command != "" {
		if m.Commands == nil {
			m.Commands = map[string]Command{}
		}
		m.Commands[command] = Command{Digest: digest, Reply: r}
		m.CmdOrder = append(m.CmdOrder, command)
		if maxCommands > 0 && len(m.CmdOrder) > maxCommands {
			delete(m.Commands, m.CmdOrder[0])
			m.CmdOrder = m.CmdOrder[1:]
		}
	}
	return r
}

// Take removes and returns the first n queued messages (all of them when
// n is negative or beyond the queue), in order; size is a message's
// bytes.
func (m *Mailbox[T]) Take(n int, size func(T) int) []T {
	if n < 0 || n > len(m.Pending) {
		n = len(m.Pending)
	}
	taken := m.Pending[:n:n]
	for _, t := range taken {
		m.PendBytes -= size(t)
	}
	m.Pending = m.Pending[n:]
	if len(m.Pending) == 0 {
		m.Pending, m.PendBytes = nil, 0
	}
	return taken
}

// Drop removes every queued message (the Work ends) and returns them.
func (m *Mailbox[T]) Drop() []T {
	d := m.Pending
	m.Pending, m.PendBytes = nil, 0
	return d
}
