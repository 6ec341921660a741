package driver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
)

// MaxPending bounds the requests Pending returns, the oldest first.
const MaxPending = 100

// ApprovalInfo is a Work's pending approval request as its engine keeps
// it (wire format: JSON, stored by the durable services).
type ApprovalInfo struct {
	Found     bool // awaiting approval and visible to the asker
	Owner     string
	Label     string
	TargetID  string
	Input     string
	Requested time.Time
	Deadline  time.Time
}

// ApprovalEntry is one Work in an engine's approvals index (every
// owner's Work awaiting approval, for the approver role): no input.
type ApprovalEntry struct {
	ID, Owner string
	Label     string `json:",omitempty"`
	Requested time.Time
}

// ApprovalInput makes a Work wait for its approval before it starts
// (wire format: JSON, in the Work's stored input): its approval timeout,
// the default applied.
type ApprovalInput struct {
	Timeout time.Duration
}

// AnswerRequest reads or answers a Work's approval (wire format: JSON)
// as the owner Owner, or as the approver role (Approver). Approve is the
// answer where the request carries it (Restate's); an engine that answers
// with a call of its own per answer (Temporal's updates) leaves it false.
type AnswerRequest struct {
	Owner    string
	Approver bool `json:",omitempty"`
	Approve  bool `json:",omitempty"`
}

// Approver is the approvals side of a Store (work.Engine.Pending, Approve, Deny). Each method
// bounds its own calls within ctx.
type Approver interface {
	// ApprovalIndex returns the approvals index (nil for none).
	ApprovalIndex(ctx context.Context) ([]ApprovalEntry, error)
	// Approval reads Work id's pending request as o asks it (o's, or any
	// for work.Approver()); work.ErrNotFound when the Work has ended.
	Approval(ctx context.Context, o work.Owner, id string) (ApprovalInfo, error)
	// AnswerApproval approves or denies Work id for o; work.ErrNotFound
	// when it is not awaiting approval, or not o's.
	AnswerApproval(ctx context.Context, o work.Owner, id string, approve bool) error
}

// answerer checks who reads or answers approvals: an owner or the
// approver role.
func answerer(o work.Owner) error {
	if o.IsApprover() {
		return nil
	}
	return ValidateOwner(o)
}

// Pending returns the Work visible to o that awaits approval, oldest
// request first, at most MaxPending (work.Engine.Pending): for an owner, from
// its registry; for work.Approver(), from the approvals index (every
// owner's). A Work answered, cancelled or ended meanwhile is left out.
func (p *Portable) Pending(ctx context.Context, o work.Owner) ([]work.ApprovalRequest, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	if err := answerer(o); err != nil {
		return nil, err
	}
	var ids []string
	if o.IsApprover() {
		entries, err := p.store.ApprovalIndex(ctx)
		if err != nil {
			return nil, err
		}
		slices.SortStableFunc(entries, func(a, b ApprovalEntry) int { return a.Requested.Compare(b.Requested) })
		for _, x := range entries {
			ids = append(ids, x.ID)
		}
	} else {
		recs, err := p.visible(ctx, o)
		if err != nil {
			return nil, err
		}
		ids = AwaitingApproval(recs)
	}
	out := []work.ApprovalRequest{}
	for _, id := range ids {
		if len(out) == MaxPending {
			break
		}
		info, err := p.store.Approval(ctx, o, id)
		switch {
		case errors.Is(err, work.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case !info.Found:
			continue
		}
		out = append(out, work.ApprovalRequest{Work: work.Ref{ID: id, TargetID: info.TargetID, Durable: true},
			TargetLabel: info.Label, Owner: info.Owner, Input: info.Input, RequestedAt: info.Requested, Deadline: info.Deadline})
	}
	slices.SortStableFunc(out, func(a, b work.ApprovalRequest) int { return a.RequestedAt.Compare(b.RequestedAt) })
	return out, nil
}

// Approve lets Work id, awaiting approval, join the dispatch queue
// (work.Engine.Approve); o is its owner or work.Approver(). A Work that is
// unknown, another owner's or not awaiting approval is work.ErrNotFound.
func (p *Portable) Approve(ctx context.Context, o work.Owner, id string) error {
	return p.answer(ctx, o, id, true)
}

// Deny cancels Work id, awaiting approval, with class work.ClassDenied
// (work.Engine.Deny), checked as Approve checks it.
func (p *Portable) Deny(ctx context.Context, o work.Owner, id string) error {
	return p.answer(ctx, o, id, false)
}

func (p *Portable) answer(ctx context.Context, o work.Owner, id string, approve bool) error {
	if err := p.ready(); err != nil {
		return err
	}
	if err := answerer(o); err != nil {
		return err
	}
	if !contract.IsID(id) {
		return work.ErrNotFound
	}
	return p.store.AnswerApproval(ctx, o, id, approve)
}
