package work

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work/internal/sendcheck"
	"github.com/agentwork/agentwork/work/observe"
)

// The errors a refused guidance message is reported as, by the verdict of
// sendcheck (the order of its checks), for this package's engine and for
// work/driver's Mailbox.Check.
func init() {
	sendcheck.Report(map[sendcheck.Verdict]error{
		sendcheck.NotAgent: ErrNotAgent,
		sendcheck.Conflict: ErrConflict,
		sendcheck.Terminal: ErrTerminal,
		sendcheck.Full:     ErrMailboxFull,
	})
}

// dropCommands forgets every command record of it (the cursor stays).
func (it *item) dropCommands() {
	if it.mb != nil {
		it.mb.records, it.mb.order, it.mb.next = nil, nil, 0
	}
}

// guidance drains the Work's mailbox (boundary.Guidance): the guidance
// accepted since the last call, in order, with an
// observe.EventGuidanceDelivered when there is some.
func (it *item) guidance() []string {
	s := it.s
	var em emission
	s.mu.Lock()
	var msgs []string
	if mb := it.mb; mb != nil {
		msgs = mb.queued
		mb.queued, mb.bytes = nil, 0
	}
	if len(msgs) > 0 {
		em.add(it, observe.Event{Type: observe.EventGuidanceDelivered, Time: s.clock.Now(), Count: len(msgs)})
	}
	s.unlockAndEmit(&em)
	return msgs
}

func (it *item) receipt(cursor int, at time.Time) SendReceipt {
	c := strconv.Itoa(cursor)
	return SendReceipt{WorkID: it.id(), ID: it.id() + "." + c, Cursor: c, AcceptedAt: at}
}

// Send queues guidance for a non-terminal agent child visible to o. The
// text waits in the Work's FIFO mailbox until the child drains it at its
// next model-request boundary (boundary.Guidance); the engine then holds no
// copy. Guidance accepted while the child has a question open answers it
// (see "Updates and questions" in docs/engine.md; Answer also reaches a
// function child). commandID is the caller's command identity (the
// model's tool-call id): the same commandID with the same text returns the first receipt and
// queues nothing; with other text it is ErrConflict. Only SHA-256 digests
// of the command id and of the text are kept for this. An empty commandID
// is never deduplicated.
//
// Everything Send keeps is bounded (see the options): a message larger
// than the per-message limit (default 16 KiB) is ErrMessageTooLarge; a
// message that would take the undelivered guidance of the Work over its
// count or byte limit (default 32 messages, 64 KiB) is ErrMailboxFull.
// At most 256 command records are kept per Work (by default), the oldest
// dropped first: a replay older than that window is treated as a new
// command. A Work keeps no records once it is detached or evicted, or once
// Result has returned its terminal answer. A refused Send stores nothing.
//
// Send fails with ErrInvalidOwner, ErrEmptyMessage, ErrMessageTooLarge,
// ErrNotFound, ErrNotAgent, ErrConflict, ErrTerminal or ErrMailboxFull,
// checked in that order: a replay of a recorded command returns its
// receipt even after the Work has ended or while its mailbox is full.
func (s *Engine) Send(ctx context.Context, o Owner, id, commandID, message string) (SendReceipt, error) {
	if s != nil && s.impl != nil {
		return s.impl.Send(ctx, o, id, commandID, message)
	}
	return s.send(o, id, commandID, message, true)
}

// send is Send, and Answer when agentOnly is false (a function child's
// guidance is its answer: AwaitAnswer). Guidance accepted while the child
// has a question open answers it (update_work.go).
func (s *Engine) send(o Owner, id, commandID, message string, agentOnly bool) (SendReceipt, error) {
	if s.uninitialized() {
		return SendReceipt{}, ErrNotInitialized
	}
	if err := validOwner(o); err != nil {
		return SendReceipt{}, err
	}
	if strings.TrimSpace(message) == "" {
		return SendReceipt{}, ErrEmptyMessage
	}
	if len(message) > s.lim.MaxMessageBytes {
		return SendReceipt{}, errorf(ErrMessageTooLarge, "a guidance message may have at most %d bytes", s.lim.MaxMessageBytes)
	}
	digest := sha256.Sum256([]byte(message))
	var key [sha256.Size]byte
	if commandID != "" {
		key = sha256.Sum256([]byte(commandID))
	}
	var e emission
	s.mu.Lock()
	it, err := s.lookupLocked(o, id)
	if err != nil {
		s.mu.Unlock()
		return SendReceipt{}, err
	}
	// The refusals' order and errors are sendcheck's, over this
	// mailbox's facts; its limits always bound.
	mb := it.mb
	var (
		rec            record
		recorded       bool
		queued, qbytes int
	)
	if mb != nil {
		if commandID != "" {
			rec, recorded = mb.records[key]
		}
		queued, qbytes = len(mb.queued), mb.bytes
	}
	switch v := sendcheck.Of(sendcheck.Facts{
		NotAgent:  agentOnly && it.target.Kind != KindAgent,
		Recorded:  recorded,
		OtherText: rec.digest != digest,
		Terminal:  it.terminal(),
		Full:      queued >= s.lim.MaxQueuedGuidance || qbytes+len(message) > s.lim.MaxQueuedGuidanceBytes,
	}); v {
	case sendcheck.Accept:
	case sendcheck.Repeat:
		s.mu.Unlock()
		return it.receipt(rec.cursor, rec.at), nil
	default:
		s.mu.Unlock()
		if v == sendcheck.Full {
			return SendReceipt{}, errorf(sendcheck.Err(v).(*Error), "at most %d undelivered messages (%d bytes) are kept per work",
				s.lim.MaxQueuedGuidance, s.lim.MaxQueuedGuidanceBytes)
		}
		return SendReceipt{}, sendcheck.Err(v)
	}
	if mb == nil {
		mb = &mailbox{}
	}
	it.mb = mb
	now := s.clock.Now()
	mb.cursor++
	mb.queued = append(mb.queued, message)
	mb.bytes += len(message)
	if commandID != "" {
		mb.remember(key, record{digest: digest, cursor: mb.cursor, at: now}, s.lim.MaxCommandRecords)
	}
	r := it.receipt(mb.cursor, now)
	if it.upd != nil {
		it.upd.answerLocked()
	}
	e.add(it, observe.Event{Type: observe.EventGuidanceAccepted, Time: now, Count: 1})
	s.unlockAndEmit(&e)
	return r, nil
}
