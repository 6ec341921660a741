package driver

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

// Controller is the control side of a Store: the calls to the service
// that Portable's Detach, Send, Answer, Release and Updates make after
// their checks. Each bounds its own calls (the engine's RPC timeout)
// within ctx.
type Controller interface {
	// DetachLive asks non-terminal Work id to leave o's view while it
	// runs on; detached false (and no error) when it ended meanwhile.
	DetachLive(ctx context.Context, o work.Owner, id string) (detached bool, err error)
	// ForgetSettled makes o's registry forget terminal Work id.
	ForgetSettled(ctx context.Context, o work.Owner, id string) error
	// SendGuidance queues g for Work rec of o and returns its cursor and
	// when it was accepted, or the Work's refusal (work.ErrConflict,
	// work.ErrTerminal, work.ErrMailboxFull, ...).
	SendGuidance(ctx context.Context, o work.Owner, rec Record, g Guidance) (cursor int, at time.Time, err error)
	// SetPool keeps pool b for o in its registry; o is a valid
	// top-level owner and b a valid budget.
	SetPool(ctx context.Context, o work.Owner, b work.Budget) error
	// ReleaseOwner releases o (work.Engine.Release): its registry
	// detaches all its Work, cancels the unfinished part and forgets it.
	ReleaseOwner(ctx context.Context, o work.Owner) error
	// ReadUpdates returns Work id's updates with Seq > after, in order;
	// found false when the Work is no longer o's.
	ReadUpdates(ctx context.Context, o work.Owner, id string, after int) (ups []work.Update, found bool, err error)
	Canceller
}

// Guidance is one guidance message as a Store receives it.
type Guidance struct {
	Text    string
	Digest  string // Digest(Text): the command record keeps it, never the text
	Command string // Digest of the model's tool-call identity; "" for none
	Answer  bool   // Answer: a function child's guidance too (it answers its questions)
}

// Detach hides a Work from o without cancelling it (work.Engine.Detach):
// a live Work is asked to leave o's view; a terminal one (or one that
// ended meanwhile) is forgotten by o's registry, and its detached event
// reported here.
func (p *Portable) Detach(ctx context.Context, o work.Owner, id string) (work.DetachReceipt, error) {
	rec, err := p.lookup(ctx, o, id)
	if err != nil {
		return work.DetachReceipt{}, err
	}
	if !rec.State.Terminal() {
		ok, err := p.store.DetachLive(ctx, o, id)
		if err != nil {
			return work.DetachReceipt{}, err
		}
		if ok {
			return work.DetachReceipt{ID: id}, nil
		}
	}
	if err := p.store.ForgetSettled(ctx, o, id); err != nil {
		return work.DetachReceipt{}, err
	}
	p.events.Event(ctx, observe.Event{Type: observe.EventDetached, WorkID: id, Owner: o.ID(), Depth: o.Depth(),
		Target: rec.Label, Kind: rec.Kind, Time: time.Now()})
	return work.DetachReceipt{ID: id}, nil
}

// Send queues guidance for a non-terminal agent child
// (work.Engine.Send), its errors in the contract's order.
func (p *Portable) Send(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return p.send(ctx, o, id, commandID, message, false)
}

// Answer queues guidance as Send does, for an agent or a function child
// (work.Engine.Answer): it answers the Work's open questions and never returns
// work.ErrNotAgent.
func (p *Portable) Answer(ctx context.Context, o work.Owner, id, commandID, message string) (work.SendReceipt, error) {
	return p.send(ctx, o, id, commandID, message, true)
}

func (p *Portable) send(ctx context.Context, o work.Owner, id, commandID, message string, answer bool) (work.SendReceipt, error) {
	if err := p.ready(); err != nil {
		return work.SendReceipt{}, err
	}
	if err := ValidateOwner(o); err != nil {
		return work.SendReceipt{}, err
	}
	if err := checkMessage(message, p.limits.MaxMessageBytes); err != nil {
		return work.SendReceipt{}, err
	}
	rec, err := p.lookup(ctx, o, id)
	if err != nil {
		return work.SendReceipt{}, err
	}
	if !answer && rec.Kind != work.KindAgent {
		return work.SendReceipt{}, work.ErrNotAgent
	}
	g := Guidance{Text: message, Digest: Digest(message), Command: Digest(commandID), Answer: answer}
	n, at, err := p.store.SendGuidance(ctx, o, rec, g)
	if err != nil {
		return work.SendReceipt{}, err
	}
	cursor := strconv.Itoa(n)
	return work.SendReceipt{WorkID: id, ID: id + "." + cursor, Cursor: cursor, AcceptedAt: at}, nil
}

// Release detaches all of o's visible Work, cancels the unfinished part
// and forgets o (work.Engine.Release); the zero Owner is no error. It
// releases o in the Store, then o's foreground calls (Local) whether or
// not the Store answered, and returns the Store's error.
func (p *Portable) Release(ctx context.Context, o work.Owner) error {
	if err := p.ready(); err != nil {
		return err
	}
	if o.IsZero() {
		return nil
	}
	err := p.store.ReleaseOwner(ctx, o)
	if lerr := p.local.Release(ctx, o); err == nil {
		err = lerr
	}
	return err
}

// SetPool gives the top-level owner o a pool (work.Engine.SetPool),
// kept by the Store (o's registry, so that it holds across every
// coordinator process). Its checks come before any call, in the
// contract's order: the engine's invalid limit or budget option
// (Admissible), a negative Budget field (work.ErrInvalidBudget), the zero
// Owner (work.ErrInvalidOwner), a child's scope (work.ErrInvalidOwner too).
func (p *Portable) SetPool(ctx context.Context, o work.Owner, b work.Budget) error {
	if err := p.ready(); err != nil {
		return err
	}
	if err := p.store.Admissible(); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	if err := ValidateOwner(o); err != nil {
		return err
	}
	if o.Depth() > 0 {
		return Detail(work.ErrInvalidOwner, contract.PoolScope)
	}
	return p.store.SetPool(ctx, o, b)
}

// Updates returns the updates of Work id visible to o with Seq > after,
// in order (work.Engine.Updates; an empty slice for none), answering
// from the registry's count when there is nothing after the cursor.
func (p *Portable) Updates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, error) {
	rec, err := p.lookup(ctx, o, id)
	if err != nil {
		return nil, err
	}
	if rec.Updates <= max(after, 0) {
		// The registry's count is sent before a child has its receipt.
		return []work.Update{}, nil
	}
	ups, found, err := p.store.ReadUpdates(ctx, o, id, after)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, work.ErrNotFound
	case ups == nil:
		return []work.Update{}, nil
	}
	return ups, nil
}

// ErrRunEnded is a Canceller's answer when the run of the Work it asked
// has ended before deciding: the Work settled, or its run continued as
// new. Portable reads the Work again and asks again while it is live, a
// bounded number of times.
var ErrRunEnded = errors.New("driver: the Work's run ended before it answered")

// cancelTries bounds the asks of a cancel whose run keeps ending.
const cancelTries = 3

// CancelReply is a Work's own decision on a cancel (wire format: JSON):
// whether it accepted it, the state it decided and when.
type CancelReply struct {
	Accepted bool
	State    observe.State
	At       time.Time
}

// Receipt is r as the receipt of a cancel of Work id.
func (r CancelReply) Receipt(id string) work.CancelReceipt {
	return work.CancelReceipt{WorkID: id, Accepted: r.Accepted, State: r.State, AcceptedAt: r.At}
}

// Canceller is the cancel side of a Store.
type Canceller interface {
	// CancelWork asks non-terminal Work id of o to stop and returns the
	// Work's own decision as its receipt (accepted with cancel-requested
	// or cancelled, or refused with the terminal state it had reached):
	// never a state read after the decision. ErrRunEnded: ask again.
	CancelWork(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error)
}

// Cancel asks for a Work to stop (work.Engine.Cancel): terminal Work is
// not accepted, with its state; otherwise the Work's decision is the
// receipt.
func (p *Portable) Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	rec, err := p.lookup(ctx, o, id)
	for try := 1; err == nil; try++ {
		if rec.State.Terminal() || try > cancelTries {
			return work.CancelReceipt{WorkID: id, State: rec.State, AcceptedAt: time.Now()}, nil
		}
		r, cerr := p.store.CancelWork(ctx, o, id)
		if !errors.Is(cerr, ErrRunEnded) {
			return r, cerr
		}
		rec, err = p.lookup(ctx, o, id)
	}
	return work.CancelReceipt{}, err
}
