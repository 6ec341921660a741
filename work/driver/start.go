package driver

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// LaunchIdentity is spec's launch identity as a registry keeps it: the SHA-256 of
// the tool-call id and of the input, hex, never either ("" and "" for a
// start with no call id).
func LaunchIdentity(spec work.Spec) (key, digest string) {
	if spec.CallID == "" {
		return "", ""
	}
	return Digest(spec.CallID), hex.EncodeToString(spec.InputDigest[:])
}

// Refused reports a refused start to obs, with the caller's context (as
// work.Engine does): reason is a limit's name or a failure class,
// budget the budget that could not be covered. obs nil reports nothing.
func Refused(ctx context.Context, obs observe.Observer, spec work.Spec, reason, budget string) {
	if obs == nil {
		return
	}
	obs.Event(ctx, observe.Event{Type: observe.EventRefused, Owner: spec.Owner.ID(), Depth: spec.Owner.Depth(),
		Target: spec.Target.Label, Kind: spec.Target.Kind, Time: time.Now(), ErrorClass: reason, Budget: budget})
}

// TooDeep refuses (work.ErrLimit) and reports a start by an owner at
// or past maxDepth; nil otherwise.
func TooDeep(ctx context.Context, obs observe.Observer, spec work.Spec, maxDepth int) error {
	if spec.Owner.Depth() < maxDepth {
		return nil
	}
	Refused(ctx, obs, spec, observe.LimitDepth, "")
	return Detail(work.ErrLimit, contract.LimitDetail(contract.LimitDepth, maxDepth))
}

// NewWork is a Work being started as Portable.Start resolved it, for the
// engine's Admitter: every value the contract decides, computed once.
type NewWork struct {
	Spec     work.Spec
	ID       string    // the new Work's id
	TargetID string    // Spec.Target.ID, or its label
	Created  time.Time // UTC
	// Budget is the child's budget with the defaults, ceiling and maximum
	// duration applied, as in-process (the owner's pool may lower it at
	// admission: Admission.Eff is its request).
	Budget         work.Budget
	MaxResultBytes int       // the output bound (contract.ResultBytes)
	Admission      Admission // what the owner's registry decides on
	// Approval is a Spec with NeedsApproval's wait for its answer: its
	// timeout, the Spec's or 24 hours when it sets none (nil: no approval).
	Approval *ApprovalInput
	// Updates is the Spec's update policy with its defaults (nil: none).
	Updates *work.UpdatePolicy
	// Mailbox bounds the Work's undelivered guidance and its command
	// records (work.WithGuidanceQueue, WithCommandRecords, resolved).
	Mailbox MailboxLimits
}

// Admitter is the start side of a Store.
type Admitter interface {
	// Admissible returns what refuses every Start and Call of an engine
	// that is not closed before the Spec is looked at: an invalid option
	// (work.ErrInvalidLimit, work.ErrInvalidBudget) or a service that is
	// not configured.
	Admissible() error
	// Admit admits w in its owner's registry and starts its Work. A
	// repeated launch answers the first Work's Ref. A refusal by a limit
	// or the pool also returns its reason (the limit's name, or
	// work.ClassBudgetExhausted with the budget that could not be
	// covered) for the refused event Portable reports.
	Admit(ctx context.Context, w NewWork) (ref work.Ref, reason, budget string, err error)
}

// admissible: not closed (work.ErrClosed), then the engine's own check.
func (p *Portable) admissible() error {
	if err := p.ready(); err != nil {
		return err
	}
	if p.life.Closed() {
		return work.ErrClosed
	}
	return p.store.Admissible()
}

// Start admits Work against its owner's limits and pool and starts it
// (work.Engine.Start): the Spec's validation, the depth limit, the
// target id, the resolved budget and output bound, and the launch's
// identity are decided here, the admission by the engine's registry.
func (p *Portable) Start(ctx context.Context, spec work.Spec) (work.Ref, error) {
	if err := p.admissible(); err != nil {
		return work.Ref{}, err
	}
	if err := spec.Validate(); err != nil {
		return work.Ref{}, err
	}
	if err := TooDeep(ctx, p.events, spec, p.limits.MaxDepth); err != nil {
		return work.Ref{}, err
	}
	w := NewWork{Spec: spec, ID: NewID(), TargetID: spec.Target.ID, Created: time.Now().UTC(),
		Budget: effectiveBudget(p.local, spec.Budget), MaxResultBytes: contract.ResultBytes(spec.MaxResultBytes, p.limits.MaxResultBytes),
		Mailbox: MailboxLimits{Messages: p.limits.MaxQueuedGuidance, Bytes: p.limits.MaxQueuedGuidanceBytes,
			Commands: p.limits.MaxCommandRecords}}
	if w.TargetID == "" {
		w.TargetID = spec.Target.Label
	}
	if spec.NeedsApproval {
		w.Approval = &ApprovalInput{Timeout: contract.ApprovalWait(spec.ApprovalTimeout)}
	}
	if spec.Updates != nil {
		u := ResolveUpdates(*spec.Updates)
		w.Updates = &u
	}
	key, digest := LaunchIdentity(spec)
	w.Admission = Admission{Record: Record{ID: w.ID, Label: spec.Target.Label, TargetID: w.TargetID,
		Kind: spec.Target.Kind, Created: w.Created}, MaxOutstanding: p.limits.MaxOutstanding,
		MaxStarts: p.limits.MaxStarts, Retain: p.limits.RetainTerminal, RetainAge: p.limits.RetainAge,
		Want: BudgetDims(spec.Budget), Eff: BudgetDims(w.Budget), Function: spec.Target.Kind == work.KindFunction,
		Launch: key, Digest: digest, Approval: spec.NeedsApproval}
	ref, reason, budget, err := p.store.Admit(ctx, w)
	if err != nil {
		if reason != "" {
			Refused(ctx, p.events, spec, reason, budget)
		}
		return work.Ref{}, err
	}
	return ref, nil
}

// Call runs a foreground child in this process, on Local
// (work.Engine.Call), once the engine is admissible.
func (p *Portable) Call(ctx context.Context, spec work.Spec) (string, error) {
	if err := p.admissible(); err != nil {
		return "", err
	}
	return p.local.Call(ctx, spec)
}

// effectiveBudget is the budget a child whose own is want runs with under
// the in-process engine local (its defaults and ceiling), pools aside.
func effectiveBudget(local any, want work.Budget) work.Budget {
	dims, maxDur := seam.EffectiveBudget(local, BudgetDims(want), want.MaxDuration)
	b := work.Budget{MaxDuration: maxDur}
	SetBudgetDims(&b, dims)
	return b
}
