package driver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// Store is what a durable engine gives Portable: its owners' registries and
// the outputs its Work keeps. Each method bounds its own calls to the
// engine's service (its RPC timeout) within ctx.
type Store interface {
	// Records returns o's registry, every record with no age bound
	// applied (nil when o has none). o is valid.
	Records(ctx context.Context, o work.Owner) ([]Record, error)
	// Progress returns the last progress counts of running Work id, or
	// ok false when there are none to read; err when they are there but
	// cannot be read (a payload the engine cannot decode), which Status
	// returns.
	Progress(ctx context.Context, id string) (p observe.Progress, ok bool, err error)
	// Output returns the exact output of Work id, completed and visible
	// to o; work.ErrNotFound when it is no longer o's.
	Output(ctx context.Context, o work.Owner, id string) (string, error)
	// MarkRead records in o's registry that o has read id's result (for
	// the status block's priority). Best effort: Portable ignores its error.
	MarkRead(ctx context.Context, o work.Owner, id string) error
	// ReadUpdateMeta returns the metadata of Work id's updates with Seq >
	// after, in order, never their values (UpdateMeta); found is false
	// when the Work is not visible to o. Subscribe's update notices
	// read it.
	ReadUpdateMeta(ctx context.Context, o work.Owner, id string, after int) (ms []UpdateMeta, found bool, err error)
	Controller
	Approver
	Admitter
}

// Waiter is a Store's fast path for Result's wait (as database/sql's
// optional driver interfaces): it waits until Work id of o ends or ctx is
// done. ended reports whether it ended; final is then its record and out
// its output when it completed. work.ErrNotFound: the Work was detached
// or released while awaited. A Store without it is polled: its registry
// read with a backoff of 10 ms doubling to 200 ms.
type Waiter interface {
	Wait(ctx context.Context, o work.Owner, id string) (final Record, out string, ended bool, err error)
}

// Portable is the part of the work.Engine contract for a durable engine
// that needs no call of its own to the service, written once over a
// Store: owner and id checks, the age bound
// of retention, Status (progress only while running), List, Rows (the
// zero owner reads nothing), Result (the timeout's check and cap, the
// wait, the read mark and its result-read event), Settled, Live and
// Subscribe (reading the registry with no age bound, so that Work that
// settles and expires between two polls still has its notice), and the
// checks, events and receipts around Detach, Send, Answer, Release,
// SetPool and Updates (control.go), and the deployment view's cache
// (Snapshot). A durable engine embeds Portable and sets it up with Init
// before any other use; every exported method of Portable is a method of
// the engine's contract (an embedding engine promotes them all). The zero
// Portable answers work.ErrNotInitialized, never a panic. Its methods are
// safe for concurrent use.
type Portable struct {
	store  Store
	events observe.Observer // the Observer the engine reports to (Observer returns it)
	poll   time.Duration    // how often a Subscription reads the registry
	life   Life             // the Subscriptions, the deployment watch, closed
	limits Limits           // the engine's limits (ResolveLimits)
	// local is the in-process engine (work.New's) that runs this
	// engine's foreground calls (work.Engine.Call).
	local *work.Engine
	// census and read: the deployment view (Snapshot).
	census Cache
	read   func(context.Context) (observe.Snapshot, error)
}

// Config is what a durable engine gives Init.
type Config struct {
	// Options are the engine's work options (its WithOptions), and
	// Limits what they resolve to as the engine enforces them (a runner
	// may lower a bound, such as the output bound to its payload limit);
	// Limits.Observer is the Observer the engine reports to.
	// The foreground calls run on an in-process engine made with
	// them, its output bound set to Limits'.
	Options []work.Option
	Limits  Limits
	// PollInterval is how often a Subscription reads the registry.
	PollInterval time.Duration
	// Read makes the deployment view: Snapshot returns Read's answer,
	// reused for Limits.SnapshotInterval; with Limits.ExportDeployment,
	// Init registers the engine (Watched) with Events when it is a
	// observe.Watcher, until Close. Read nil: Snapshot is
	// work.ErrUnavailable.
	Read    func(context.Context) (observe.Snapshot, error)
	Watched observe.Watched
	// Unusable, when set, is what every call to the Store and Read
	// answers instead, neither of which is made: the engine was made without what it
	// needs to reach its service (a nil client, no address). Every Start,
	// Call and SetPool is refused with it (after an invalid option's
	// error), every other method answers it once its arguments are
	// checked, and Close closes.
	Unusable error
}

// Init sets p up as the Portable of an engine over s. It is a function,
// not a method, so that an embedding engine does not promote it. A nil p
// is left as it is (its methods answer work.ErrNotInitialized), as is p
// with a nil s.
func Init(p *Portable, s Store, c Config) {
	if p == nil || s == nil {
		return
	}
	if c.Unusable != nil {
		s = unusable{s, c.Unusable}
		c.Read = func(context.Context) (observe.Snapshot, error) { return observe.Snapshot{}, c.Unusable }
	}
	p.store, p.events, p.poll, p.limits = s, c.Limits.Observer, c.PollInterval, c.Limits
	if p.events == nil {
		p.events = observe.NopObserver{}
	}
	p.local = work.New(append(append([]work.Option{work.WithObserver(p.events)}, c.Options...),
		work.WithMaxResultBytes(c.Limits.MaxResultBytes))...)
	p.read = c.Read
	if c.Limits.ExportDeployment && c.Watched != nil {
		p.life.watch.Start(p.events, c.Watched)
	}
}

// Watch has o watch w (observe.Watcher.Watch) when o is an observe.Watcher, and
// returns what ends the watch (nothing to end otherwise).
func Watch(o observe.Observer, w observe.Watched) func() {
	if wt, ok := o.(observe.Watcher); ok {
		return wt.Watch(w)
	}
	return func() {}
}

// ready is work.ErrNotInitialized for a Portable that Init did not set
// up (an engine's zero value).
func (p *Portable) ready() error {
	if p == nil || p.store == nil {
		return work.ErrNotInitialized
	}
	return nil
}

// Close ends the Subscriptions and the deployment watch, then cancels the
// foreground calls in progress and waits for them while ctx allows (its
// error if it ends first). Work on the service is unaffected. Called with
// a context of one of its foreground children it fails at once with
// work.ErrCloseFromChild and closes nothing, as the in-process engine's
// Close does.
func (p *Portable) Close(ctx context.Context) error {
	if err := p.ready(); err != nil {
		return err
	}
	if fromChild(p.local, ctx) {
		return work.ErrCloseFromChild
	}
	err := p.life.Close(ctx)
	return cmp.Or(err, p.local.Close(ctx)) // both closed, whatever ctx allows
}

// fromChild reports whether ctx is a child's of e (seam.FromChild).
var fromChild = seam.FromChild.(func(*work.Engine, context.Context) bool)

// Snapshot returns the deployment view (observe.Watched): the engine's read,
// reused for the deployment interval, concurrent callers sharing one
// refresh. After Close it is work.ErrClosed.
func (p *Portable) Snapshot(ctx context.Context) (observe.Snapshot, error) {
	if err := p.ready(); err != nil {
		return observe.Snapshot{}, err
	}
	if p.life.Closed() {
		return observe.Snapshot{}, work.ErrClosed
	}
	if p.read == nil {
		return observe.Snapshot{}, Detail(work.ErrUnavailable, "no deployment view")
	}
	return p.census.Snapshot(ctx, p.limits.SnapshotInterval, p.read)
}

// Observer returns the engine's Observer: observe.NopObserver before
// Init (and on a nil Portable), never nil, as work.Engine requires.
func (p *Portable) Observer() observe.Observer {
	if p == nil || p.events == nil {
		return observe.NopObserver{}
	}
	return p.events
}

// Now returns the current time: a durable engine's clock is the wall
// clock.
func (p *Portable) Now() time.Time { return time.Now() }

// NewID returns a new Work id: 32 lowercase hex digits from crypto/rand.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// visible returns the records visible to o: its registry without those
// past the age bound, whether or not the registry has evicted them yet.
func (p *Portable) visible(ctx context.Context, o work.Owner) ([]Record, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	if err := ValidateOwner(o); err != nil {
		return nil, err
	}
	recs, err := p.store.Records(ctx, o)
	if err != nil || p.limits.RetainAge <= 0 {
		return recs, err
	}
	return Current(recs, time.Now(), p.limits.RetainAge), nil
}

// lookup finds Work id visible to o (work.ErrNotFound when none).
func (p *Portable) lookup(ctx context.Context, o work.Owner, id string) (Record, error) {
	if err := p.ready(); err != nil {
		return Record{}, err
	}
	if err := ValidateOwner(o); err != nil {
		return Record{}, err
	}
	if !contract.IsID(id) {
		return Record{}, work.ErrNotFound
	}
	recs, err := p.visible(ctx, o)
	if err != nil {
		return Record{}, err
	}
	return Find(recs, id)
}

// Status returns the projection of one Work visible to o; a running
// Work's progress counts are read from the Store (its error, when they
// cannot be read, is Status's).
func (p *Portable) Status(ctx context.Context, o work.Owner, id string) (work.Status, error) {
	rec, err := p.lookup(ctx, o, id)
	if err != nil {
		return work.Status{}, err
	}
	st := rec.Status()
	if rec.State == work.StateRunning || rec.State == work.StateCancelRequested {
		p, ok, err := p.store.Progress(ctx, id)
		if err != nil {
			return work.Status{}, err
		}
		if ok {
			st.Progress = p
		}
	}
	return st, nil
}

// List returns at most 50 Works visible to o in the
// contract's order (unfinished first, then newest first).
func (p *Portable) List(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := p.visible(ctx, o)
	if err != nil {
		return nil, err
	}
	return List(recs), nil
}

// Rows returns the status-block rows of o (in the contract's order), or the
// error of reading o's registry; nothing for the zero Owner.
func (p *Portable) Rows(ctx context.Context, o work.Owner) ([]observe.Row, int, error) {
	if err := p.ready(); err != nil {
		return nil, 0, err
	}
	if o.IsZero() {
		return nil, 0, nil
	}
	recs, err := p.visible(ctx, o)
	if err != nil {
		return nil, 0, err
	}
	rows, more := Rows(recs, time.Now())
	return rows, more, nil
}

// Result returns the exact output of completed Work, else waits (up to
// the capped timeout, or ctx) for the Work to settle and returns its
// Status then, as work.Engine's contract says. The Status is the one
// before this read: ResultRead is false on the first read of a result.
func (p *Portable) Result(ctx context.Context, o work.Owner, id string, timeout time.Duration) (work.Status, string, error) {
	if err := p.ready(); err != nil {
		return work.Status{}, "", err
	}
	if timeout < 0 {
		return work.Status{}, "", work.ErrInvalidTimeout
	}
	timeout = min(timeout, work.MaxResultWait)
	rec, err := p.lookup(ctx, o, id)
	if err != nil {
		return work.Status{}, "", err
	}
	out, haveOut := "", false
	if !rec.State.Terminal() && timeout > 0 {
		if rec, out, haveOut, err = p.wait(ctx, o, rec, timeout); err != nil {
			return work.Status{}, "", err
		}
	}
	if rec.State != work.StateCompleted || !rec.HasResult {
		return rec.Status(), "", nil
	}
	// The wait may have ended with ctx: the reads after it are the
	// caller's whatever ctx says now.
	rctx := context.WithoutCancel(ctx)
	if !haveOut {
		if out, err = p.store.Output(rctx, o, id); err != nil {
			return work.Status{}, "", err
		}
	}
	if !rec.Read {
		_ = p.store.MarkRead(rctx, o, id)
		p.events.Event(ctx, observe.Event{Type: observe.EventResultRead, WorkID: id, Owner: o.ID(), Depth: o.Depth(),
			Target: rec.Label, Kind: rec.Kind, Time: time.Now(), Bytes: len(out)})
	}
	return rec.Status(), out, nil
}

// wait waits up to timeout, or ctx, for rec's Work to settle, through the
// Store's Waiter or by polling, and returns its record then (with its
// output when the wait brought it).
func (p *Portable) wait(ctx context.Context, o work.Owner, rec Record, timeout time.Duration) (Record, string, bool, error) {
	if w, ok := p.store.(Waiter); ok {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		final, out, ended, err := w.Wait(wctx, o, rec.ID)
		cancel()
		switch {
		case err != nil && !ended:
			if errors.Is(err, work.ErrNotFound) {
				return Record{}, "", false, err
			}
		case ended:
			rec.Take(final)
			return rec, out, rec.State == work.StateCompleted, nil
		}
		// The wait ended (timeout, ctx or a failed wait): read the
		// registry again, whatever the caller's ctx.
		rec, err = p.lookup(context.WithoutCancel(ctx), o, rec.ID)
		return rec, "", false, err
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	id := rec.ID
	for d := 10 * time.Millisecond; !rec.State.Terminal(); d = min(2*d, 200*time.Millisecond) {
		select {
		case <-ctx.Done():
			return rec, "", false, nil
		case <-deadline.C:
			return rec, "", false, nil
		case <-time.After(d):
		}
		var err error
		if rec, err = p.lookup(context.WithoutCancel(ctx), o, id); err != nil {
			return Record{}, "", false, err
		}
	}
	return rec, "", false, nil
}

// Settled returns every terminal Work visible to o, oldest settlement
// first.
func (p *Portable) Settled(ctx context.Context, o work.Owner) ([]work.Status, error) {
	recs, err := p.visible(ctx, o)
	if err != nil {
		return nil, err
	}
	return Settled(recs), nil
}

// Live reports whether o has visible Work that is not terminal.
func (p *Portable) Live(ctx context.Context, o work.Owner) (bool, error) {
	recs, err := p.visible(ctx, o)
	if err != nil {
		return false, err
	}
	return Live(recs), nil
}

// Subscribe returns a Subscription to o's notices, as
// work.Engine.Subscribe, from reading o's registry every
// PollInterval (Life.Subscribe) with no age bound applied: Work that
// ends and expires between two polls still has its notice, as in-process,
// where the notice goes out as the Work ends.
func (p *Portable) Subscribe(ctx context.Context, o work.Owner, buffer int) (*work.Subscription, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	read := func(ctx context.Context) ([]Record, error) { return p.store.Records(ctx, o) }
	updates := func(ctx context.Context, rec Record, seen int, publish func(work.Notice)) int {
		ms, found, err := p.store.ReadUpdateMeta(ctx, o, rec.ID, seen)
		if err != nil || !found {
			return seen // the next poll reads them again
		}
		return publishUpdates(rec, ms, seen, publish)
	}
	return p.life.Subscribe(ctx, o, buffer, p.poll, read, updates)
}
