// Package contract holds the contract's rules that the in-process engine
// (package work) and the durable runners (through work/driver) both
// apply, so that each is written once without work exporting it: the
// orders of List, Rows and retention, a row's elapsed time, a Work's
// result bound and approval wait, and the details of the refusals of
// limits, pools and launch identities.
package contract

import (
	"fmt"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Order is what the contract's orders read of one Work: its state, its
// admission sequence (larger is newer: each owner's starts are numbered in
// order) and whether its result is available and was read. It is a small
// value: comparing two costs no allocation.
type Order struct {
	State           observe.State
	Seq             uint64
	ResultAvailable bool
	ResultRead      bool
}

// ListsBefore reports whether a comes before b in List: unfinished Work
// first, then finished; within each group newest (largest Seq) first.
func (a Order) ListsBefore(b Order) bool {
	if at, bt := a.State.Terminal(), b.State.Terminal(); at != bt {
		return !at
	}
	return a.Seq > b.Seq
}

// RowsBefore reports whether a comes before b in Rows: by rowPriority,
// then newest first.
func (a Order) RowsBefore(b Order) bool {
	if pa, pb := a.rowPriority(), b.rowPriority(); pa != pb {
		return pa < pb
	}
	return a.Seq > b.Seq
}

// rowPriority is a Work's rank in the status block, lower first: 0 a
// completed Work whose result is available and unread, 1 failed, 2 running
// or cancel-requested, 3 queued, 4 the rest (results already read,
// cancelled).
func (a Order) rowPriority() int {
	switch a.State {
	case observe.StateCompleted:
		if a.ResultAvailable && !a.ResultRead {
			return 0
		}
		return 4
	case observe.StateFailed:
		return 1
	case observe.StateRunning, observe.StateCancelRequested:
		return 2
	case observe.StateQueued:
		return 3
	}
	return 4
}

// Elapsed is a Row's Elapsed: from started (or created, while the Work
// has not started) to now, or to finished once the Work is terminal
// (finished is not zero); never negative.
func Elapsed(created, started, finished, now time.Time) time.Duration {
	from := started
	if from.IsZero() {
		from = created
	}
	if !finished.IsZero() {
		now = finished
	}
	if d := now.Sub(from); d > 0 {
		return d
	}
	return 0
}

// Eviction ranks (EvictionRank), evicted in this order.
const (
	EvictRead     = iota // completed, result read
	EvictUnwanted        // failed or cancelled
	EvictUnread          // completed, result not yet read
	NumEvictRanks
)

// EvictionRank is the rank of a terminal Work in state, its result read
// or not, in WithRetention's eviction order beyond the count bound: the
// lowest goes first (EvictRead, then EvictUnwanted, then EvictUnread),
// the oldest settled first within a rank.
func EvictionRank(state observe.State, read bool) int {
	switch {
	case state != observe.StateCompleted:
		return EvictUnwanted
	case read:
		return EvictRead
	}
	return EvictUnread
}

// PoolScope is the detail of SetPool's ErrInvalidOwner for a child's
// scope, which has no pool of its own.
const PoolScope = "a child's scope has no pool of its own: its children reserve from the child's reservation"

// PoolShort is the detail of the ErrBudgetExhausted of a start that its
// owner's pool cannot cover in budget (the short dimension's name).
func PoolShort(budget string) string {
	return fmt.Sprintf("the %s budget of this owner cannot cover the child's", budget)
}

// Clamp returns a Spec's override v when it is positive and does not
// exceed the engine's bound def (0: none), else def.
func Clamp[T int | time.Duration](v, def T) T {
	if v > 0 && (def == 0 || v < def) {
		return v
	}
	return def
}

// ResultBytes is the output bound of a Work whose Spec sets spec
// (Spec.MaxResultBytes) on an engine whose bound is engine
// (WithMaxResultBytes): the Spec's when it is positive and lowers the
// engine's (or the engine has none), else the engine's; 0 means no limit.
func ResultBytes(spec, engine int) int { return Clamp(spec, engine) }

// DefaultApprovalWait is how long a Work waits for its approval when its
// Spec sets no ApprovalTimeout (24 hours, as Spec documents).
const DefaultApprovalWait = 24 * time.Hour

// ApprovalWait is how long a Work whose Spec sets timeout
// (Spec.ApprovalTimeout) waits for its approval before it ends cancelled
// with ClassApprovalTimeout: timeout, or DefaultApprovalWait when it is
// not positive.
func ApprovalWait(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultApprovalWait
	}
	return timeout
}

// The limits a start is refused by (LimitDetail).
const (
	LimitDepth = iota
	LimitOutstanding
	LimitStarts
)

// LimitDetail is the detail of the ErrLimit of a start refused by limit
// (LimitDepth, LimitOutstanding or LimitStarts) whose value is n.
func LimitDetail(limit, n int) string {
	switch limit {
	case LimitDepth:
		return fmt.Sprintf("nesting depth limit %d reached", n)
	case LimitOutstanding:
		return fmt.Sprintf("outstanding limit %d reached for this owner", n)
	default:
		return fmt.Sprintf("starts limit %d reached for this owner", n)
	}
}

// LaunchConflict is the message of the ErrConflict of a launch identity
// (Spec.CallID) reused with another target or input: an error of its own
// (work/driver's DecodeError finds it by this message), not a detail.
const LaunchConflict = "the tool-call id was already used to launch other work (another target or input)"

// The defaults of a job's Backoff: 1 s doubling to 30 s (the seed's).
const (
	DefaultPollInitial = time.Second
	DefaultPollMax     = 30 * time.Second
)

// PollDelays returns a job's Backoff delays (Initial and Max) with their
// defaults applied: DefaultPollInitial when initial is 0, and
// DefaultPollMax (or initial, when that is longer) when ceiling is 0.
func PollDelays(initial, ceiling time.Duration) (time.Duration, time.Duration) {
	if initial == 0 {
		initial = DefaultPollInitial
	}
	if ceiling == 0 {
		ceiling = max(DefaultPollMax, initial)
	}
	return initial, ceiling
}

// PollDelay returns the delay before a job's next poll under its Backoff
// (Initial and Max, defaults applied by PollDelays), given the delay
// before the last poll d (0 before the first poll after the submit) and
// whether that poll reported progress: the initial delay for the first
// poll and after progress, else d doubled, capped at the Max.
func PollDelay(initial, ceiling, d time.Duration, progress bool) time.Duration {
	initial, ceiling = PollDelays(initial, ceiling)
	if d <= 0 || progress {
		return initial
	}
	return min(2*d, ceiling)
}

// PollClass is the class a failed poll of a job ends its Work with, on
// every engine: class when it is a class name (1 to 32 bytes of
// lower-case letters, digits and '_', starting with a letter), else
// fallback (work.ClassError). A class never carries text or an id:
// anything else never becomes one.
func PollClass(class, fallback string) string {
	if len(class) == 0 || len(class) > 32 || class[0] < 'a' || class[0] > 'z' {
		return fallback
	}
	for i := 0; i < len(class); i++ {
		if b := class[i]; (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '_' {
			return fallback
		}
	}
	return class
}

// MaxLaunches bounds the launch identities (Spec.CallID) an owner's
// engine remembers; beyond it the oldest is forgotten, and a replay of a
// forgotten identity starts new Work.
const MaxLaunches = 256

// The contract's list bounds.
const (
	MaxListed = 50 // entries List returns at most
	MaxRows   = 12 // rows work/boundary's Rows returns at most (its MaxRows)
)

// IsID reports whether s has the form of a Work id: 32 lowercase hex
// digits (work/boundary's IsID).
func IsID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
