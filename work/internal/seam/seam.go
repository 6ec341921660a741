// Package seam carries what package work gives its own public packages
// for implementers and adapters without exporting it to applications: to
// work/driver a child run that another engine executes (Remote, Attach,
// Exhausted), a Subscription another engine feeds (NewSubscription), the
// limits work's options set (ResolveLimits), the effective budget
// (EffectiveBudget) and work's errors (DecodeError, UpdateRefusal,
// Detail, Wrap); to work/boundary a child's model-request boundary; and
// to work/enginetest the limits with no option. Package work sets the
// functions as it initialises (every user imports work, so they are set
// before it can call them); their arguments and results are plain
// values, or work's own types passed as any, which the user asserts back.
package seam

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work/internal/limit"
	"github.com/agentwork/agentwork/work/observe"
)

// Remote is work/driver's Remote as plain values: the budget as its
// pooled dimensions (in the order of work/internal/contract.Dims) and
// MaxDuration, an update's receipt as its fields.
type Remote struct {
	WorkID       string
	OwnerID      string
	OwnerDepth   int
	Guidance     func() []string
	Dims         [3]int64
	MaxDuration  time.Duration
	FailOnBudget bool
	Event        func(observe.Event)
	Update       func(key string, value []byte, question bool) (seq int, duplicate bool, reason string)
	AwaitAnswer  func(ctx context.Context) bool
}

var (
	// Attach returns ctx carrying a work.Execution for r, and that
	// Execution (a *work.Execution).
	Attach func(ctx context.Context, r Remote) (context.Context, any)
	// Exhausted returns the budget that ran out in the run of ex (a
	// *work.Execution; "" while none has) and whether its boundary
	// refused a request.
	Exhausted func(ex any) (budget string, refused bool)
	// NewSubscription returns a *work.Subscription that another engine
	// feeds, its publish (a func(work.Notice)) and its close.
	NewSubscription func(buffer int, onClose func()) (sub, publish any, closeFn func())
	// ResolveLimits returns the limits opts (a []work.Option) set and the
	// error of the first invalid one.
	ResolveLimits func(opts any) (limit.Limits, error)
	// DecodeError returns the *work.Error of code and message (as error),
	// false for an unknown code.
	DecodeError func(code, message string) (error, bool)
	// UpdateRefusal returns the *work.Error of an update refused for
	// reason (as error).
	UpdateRefusal func(reason string) error
	// ValidateOwner returns work.ErrInvalidOwner for an Owner (a
	// work.Owner) that no engine accepts, nil for any other.
	ValidateOwner func(o any) error
	// CallError returns the error a foreground call returns for a Work
	// that ended as st (a work.Status) says, nil when it did not fail.
	CallError func(st any) error
	// EffectiveBudget returns the budget (its pooled dimensions and
	// MaxDuration) a child whose Spec.Budget is want and maxDur runs with
	// under sup (a *work.Engine; nil: no default, no ceiling), pools
	// aside.
	EffectiveBudget func(sup any, want [3]int64, maxDur time.Duration) ([3]int64, time.Duration)
	// Detail and Wrap return a *work.Error with e's code and class (e is
	// a *work.Error): Detail's message followed by detail, Wrap's cause
	// cause.
	Detail func(e any, detail string) any
	Wrap   func(e any, cause error) any
)

// NewEngine returns a *work.Engine whose implementation is impl (a
// work/driver Engine: every method of work.Engine but Shutdown, which it
// may have, and the reads of work/boundary), nil when impl is not one.
var NewEngine func(impl any) any

// Turn has the shape of work/boundary's Turn.
type Turn struct {
	Final  bool
	Budget string
}

// A child's model-request boundary (work/boundary documents each): ex is
// the child's *work.Execution.
var (
	BeginRequest  func(ex any) (Turn, error)
	EndRequest    func(ex any, inputTokens, outputTokens int64, known bool)
	ToolCallsLeft func(ex any) int
	BeginToolCall func(ex any) bool
	Guidance      func(ex any) []string
	Unanswered    func(ex any) []int
)

// An engine's reads for adapters (work/boundary documents each), each a
// method expression of *work.Engine that work/boundary asserts to its
// type as it initialises (after work): Rows is a func(*work.Engine,
// context.Context, work.Owner) ([]observe.Row, int, error), Settled a
// func(*work.Engine, context.Context, work.Owner) ([]work.Status, error),
// Live a func(*work.Engine, context.Context, work.Owner) (bool, error),
// Now a func(*work.Engine) time.Time and Observer a func(*work.Engine)
// observe.Observer. Typed so, a call boxes nothing.
var Rows, Settled, Live, Now, Observer any

// FromChild is the in-process engine's check that a Close or Shutdown
// comes from one of its children, a func(*work.Engine, context.Context)
// bool: a durable engine refuses such a call (work.ErrCloseFromChild)
// before it closes anything, as the in-process engine does.
var FromChild any

// ResolveJob is work.Job's resolved method expression, a
// func(work.Job) work.Job: j with its defaults applied.
var ResolveJob any
