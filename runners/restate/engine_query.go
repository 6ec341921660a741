package restate

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// portable is the Engine's part written once in driver.Portable over store:
// its reads, Detach, Send, Release, SetPool and Updates.
type portable = driver.Portable

// store is the Engine as the driver.Store that its reads use: an owner's
// registry object, and each Work's control object for its output and
// progress.
type store engine

// Records reads o's registry, every record (nil when o has none).
func (s *store) Records(ctx context.Context, o work.Owner) ([]ownerRecord, error) {
	e := (*engine)(s)
	var recs []ownerRecord
	if err := e.in.object(ctx, ownerService, o.ID(), hRecords, "", nil, &recs); err != nil {
		return nil, fromIngress(ctx, err)
	}
	return recs, nil
}

// Progress reads a running Work's last progress counts from its control
// object (its attempt sends them there when they change, see
// Worker.watch).
func (s *store) Progress(ctx context.Context, id string) (observe.Progress, bool, error) {
	e := (*engine)(s)
	var v controlView
	if e.in.object(ctx, controlService, id, hPeek, "", nil, &v) != nil || v.Progress == (observe.Progress{}) {
		return observe.Progress{}, false, nil
	}
	return v.Progress, true, nil
}

// Output reads completed Work's output from its control object, which
// keeps it while the registry keeps the Work's record: one that completed
// while this process was down is read the same way.
func (s *store) Output(ctx context.Context, o work.Owner, id string) (string, error) {
	e := (*engine)(s)
	var rep outputReply
	if err := e.in.object(ctx, controlService, id, hOutput, "", o.ID(), &rep); err != nil {
		return "", fromIngress(ctx, err)
	}
	if !rep.Found {
		return "", work.ErrNotFound // detached or released meanwhile
	}
	out, err := e.cfg.ring.openString(id, fieldOutput, rep.Output)
	if err != nil {
		return "", unreadable(err)
	}
	return out, nil
}

// MarkRead tells o's registry that o read id's result.
func (s *store) MarkRead(ctx context.Context, o work.Owner, id string) error {
	e := (*engine)(s)
	return e.in.object(ctx, ownerService, o.ID(), hRead, "", id, nil)
}

// DetachLive asks a live Work's control object to detach it from o.
func (s *store) DetachLive(ctx context.Context, o work.Owner, id string) (bool, error) {
	e := (*engine)(s)
	var ok bool
	if err := e.in.object(ctx, controlService, id, hDetach, "", o.ID(), &ok); err != nil {
		return false, fromIngress(ctx, err)
	}
	return ok, nil
}

// ForgetSettled tells o's registry to forget a finished Work.
func (s *store) ForgetSettled(ctx context.Context, o work.Owner, id string) error {
	e := (*engine)(s)
	return fromIngress(ctx, e.in.object(ctx, ownerService, o.ID(), hDetached, "", id, nil))
}

// SendGuidance queues g in the Work's control object: the text is its
// state until the child takes it (or the Work ends).
func (s *store) SendGuidance(ctx context.Context, o work.Owner, rec ownerRecord, g driver.Guidance) (int, time.Time, error) {
	e := (*engine)(s)
	text, err := e.cfg.ring.sealString(rec.ID, fieldGuidance, g.Text) // WithContentKeys
	if err != nil {
		return 0, time.Time{}, err
	}
	req := sendRequest{Owner: o.ID(), Digest: g.Digest, Command: g.Command, Text: text, Answer: g.Answer}
	var r sendReply
	if err := e.in.object(ctx, controlService, rec.ID, hSend, "", req, &r); err != nil {
		return 0, time.Time{}, fromIngress(ctx, err)
	}
	if err := decodeErr(r.Error, ""); err != nil {
		return 0, time.Time{}, err
	}
	return r.Cursor, r.At, nil
}

// ReleaseOwner releases o in its registry object.
func (s *store) ReleaseOwner(ctx context.Context, o work.Owner) error {
	return fromIngress(ctx, (*engine)(s).in.object(ctx, ownerService, o.ID(), hRelease, "", nil, nil))
}

// ReadUpdates reads a Work's updates from its control object, which
// checks the owner.
func (s *store) ReadUpdates(ctx context.Context, o work.Owner, id string, after int) ([]work.Update, bool, error) {
	e := (*engine)(s)
	rep, err := e.readUpdates(ctx, o, id, after)
	if err != nil {
		return nil, false, err
	}
	for i, u := range rep.Updates {
		if rep.Updates[i].Value, err = e.cfg.ring.openBytes(id, fieldUpdate, u.Value); err != nil {
			return nil, false, unreadable(err)
		}
	}
	return rep.Updates, rep.Found, nil
}
