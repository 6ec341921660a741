package work

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// causeCode is one of the causes the engine cancels a Work's context with
// (causes[c]).
type causeCode uint8

const (
	causeNone      causeCode = iota // not cancelled
	causeCanceled                   // a nil cause: context.Canceled
	causeRequested                  // errCancelRequested
	causeClosed                     // errClosed
	causeDeadline                   // errDeadline
)

var causes = [...]error{causeCanceled: nil, causeRequested: errCancelRequested, causeClosed: errClosed, causeDeadline: errDeadline}

// codeOf returns cause's code. The engine cancels with no other cause.
func codeOf(cause error) causeCode {
	for c := causeCanceled; int(c) < len(causes); c++ {
		if causes[c] == cause {
			return c
		}
	}
	panic("work: a Work's context cancelled with a cause the engine does not use")
}

// execCtx is a running Work's context: a context cancellable with a cause,
// with the Execution as the execKey value. It lives in the item, and the
// cancellable context under it (context.WithCancelCause: two allocations)
// is made only when something asks for it: Done, Err or a value other than
// the Execution (context.WithCancel, context.AfterFunc and context.Cause
// on it, or on a context derived from it, ask for it). A child that never
// looks at its context never makes one. A cancellation that comes first is
// recorded, and the context made later is cancelled with its cause at
// once: the child sees what it would have seen had the context been made
// as the Work started.
//
// Its parent is the Work's bound context (item.ctx). The engine cancels it
// with cancel and reads why it ended with cause, neither of which makes it.
type execCtx struct {
	it   *item
	mu   sync.Mutex  // guards why and the making of inner
	made atomic.Bool // inner is set (never unset): read without mu
	// why is the cause of the first cancellation while inner is not made
	// (causeNone: not cancelled).
	why         causeCode
	inner       context.Context
	cancelInner context.CancelCauseFunc
}

// get returns the cancellable context, making it on first use.
func (c *execCtx) get() context.Context {
	if c.made.Load() {
		return c.inner
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.makeLocked()
}

func (c *execCtx) makeLocked() context.Context {
	if !c.made.Load() {
		c.inner, c.cancelInner = context.WithCancelCause(c.it.ctx)
		if c.why != causeNone {
			c.cancelInner(causes[c.why])
		}
		c.made.Store(true)
	}
	return c.inner
}

// cancel cancels the context with cause (nil, errCancelRequested,
// errClosed or errDeadline); the first cancellation's cause stays.
func (c *execCtx) cancel(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made.Load() {
		c.cancelInner(cause)
		return
	}
	if c.why == causeNone {
		c.why = codeOf(cause)
	}
}

// cause returns context.Cause(c) and c.Err() without making the context
// (unless its parent, which the Observer's Bind gave, can end).
func (c *execCtx) cause() (cause, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.made.Load() && c.it.ctx.Done() == nil {
		if c.why == causeNone {
			return nil, nil
		}
		if cause = causes[c.why]; cause == nil {
			cause = context.Canceled
		}
		return cause, context.Canceled
	}
	in := c.makeLocked()
	return context.Cause(in), in.Err()
}

func (c *execCtx) Deadline() (time.Time, bool) { return c.it.ctx.Deadline() }

func (c *execCtx) Done() <-chan struct{} { return c.get().Done() }

func (c *execCtx) Err() error { return c.get().Err() }

func (c *execCtx) String() string { return fmt.Sprint(c.get()) }

func (c *execCtx) Value(key any) any {
	if key == (execKey{}) {
		return &c.it.exec
	}
	return c.get().Value(key)
}
