package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The two opt-in departures from the crux contract (Child.AutoBackground
// and Child.BackgroundByDefault), written once over the work.Engine API so
// that they hold on every engine: a call that may move is a launch (Start,
// with the tool-call id) awaited with Result up to the bound.

// autoBound returns the bound after which a call of the child made
// without run_in_background moves to the background (0: never), and checks
// the child's options: a bound of zero or less, or either option on a
// child that is not backgroundable, is ErrInvalidBackgroundOption.
// def is the Kit's default (WithAutoBackground), 0 when none.
func autoBound(label string, c Child, background bool, def time.Duration) (time.Duration, error) {
	if !background {
		if c.AutoBackground != nil {
			return 0, prepErr(ErrInvalidBackgroundOption, "middleware: child %q: AutoBackground needs a backgroundable child (wrap it with Backgroundable): its ref is followed with the work tool", label)
		}
		if c.BackgroundByDefault {
			return 0, prepErr(ErrInvalidBackgroundOption, "middleware: child %q: BackgroundByDefault needs a backgroundable child (wrap it with Backgroundable)", label)
		}
		return 0, nil
	}
	if c.AutoBackground == nil {
		return def, nil
	}
	if c.AutoBackground.After <= 0 {
		return 0, prepErr(ErrInvalidBackgroundOption, "middleware: child %q: the AutoBackground bound must be positive (got %s)", label, c.AutoBackground.After)
	}
	return c.AutoBackground.After, nil
}

// seconds writes a bound for the model: "30 seconds", "1.5 seconds", or
// Go's form for anything longer than a minute that is not whole seconds.
func seconds(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	case d < time.Minute:
		return fmt.Sprintf("%g seconds", d.Seconds())
	}
	return d.String()
}

// backgroundNote is what a backgroundable child's description adds: how to
// launch it, its default, and the bound after which a call moves.
func (t *childTool) backgroundNote() string {
	if t.byDefault {
		return ` It runs in the background by default: a call returns a work.ref at once; then use the work tool. Set "run_in_background": false to wait for its exact output instead.`
	}
	note := ` Set "run_in_background": true to start it in the background and get a work.ref at once; then use the work tool.`
	if t.auto > 0 {
		note += ` A call without "run_in_background" that takes longer than ` + seconds(t.auto) +
			` returns a work.ref instead of the output and goes on in the background: follow it with the work tool (its result action returns the output). Set "run_in_background": false to always wait for the exact output.`
	}
	return note
}

// await answers a call that admitted ref's Work to wait for it until
// deadline (on the engine's clock): the exact output if it completes by
// then (the Work is then completed and read), the error object of a
// foreground call if it fails or is cancelled by then or ctx ends first
// (the Work is then cancelled), else the ref, and the Work goes on in the
// background (EventBackgrounded). Each wait is one Result of at most
// work.MaxResultWait. It ends the call's Observer span with end.
func (t *childTool) await(ctx context.Context, ref work.Ref, deadline time.Time, bound time.Duration, end func(observe.ToolCallEnd)) string {
	s := t.set
	for {
		wait := min(max(deadline.Sub(boundary.Now(s.sup)), 0), work.MaxResultWait)
		st, out, err := s.sup.Result(ctx, s.owner, ref.ID, wait)
		switch {
		case err != nil:
			return t.lost(ref, err, end)
		case st.State == work.StateCompleted:
			end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
			return out
		case st.State.Terminal():
			return failedCall(ref.ID, boundary.CallError(st), end)
		case ctx.Err() != nil:
			return t.abandon(ctx, ref, end)
		}
		now := boundary.Now(s.sup)
		if now.Before(deadline) {
			continue // a wait capped at MaxResultWait, or one the engine cut short
		}
		s.obs.Event(ctx, observe.Event{Type: observe.EventBackgrounded, WorkID: ref.ID, Owner: s.owner.ID(),
			Depth: s.owner.Depth(), Target: t.label, Kind: t.child.Kind, From: st.State, Time: now, Duration: bound})
		end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
		return mustJSON(ref)
	}
}

// lost answers a call whose Work the engine could not read: released
// with the Kit (code released), or the engine's error.
func (t *childTool) lost(ref work.Ref, err error, end func(observe.ToolCallEnd)) string {
	if t.set.released.Load() && errors.Is(err, work.ErrNotFound) {
		end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "rejected", ErrorClass: CodeReleased})
		return released.JSON()
	}
	o := fromWork(err)
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "rejected", ErrorClass: o.Code})
	return o.JSON()
}

// abandon answers a call whose ctx ended before its Work did, as a
// foreground call whose caller went away: the Work is cancelled (under a
// context that keeps none of ctx's cancellation, bounded by
// releaseTimeout) and the call gets ErrCancelled's error object, unless the
// Work completed first, whose output it then gets.
func (t *childTool) abandon(ctx context.Context, ref work.Ref, end func(observe.ToolCallEnd)) string {
	s := t.set
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if r, err := s.sup.Cancel(bg, s.owner, ref.ID); err == nil && !r.Accepted && r.State == work.StateCompleted {
		if st, out, err := s.sup.Result(bg, s.owner, ref.ID, 0); err == nil && st.State == work.StateCompleted {
			end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
			return out
		}
	}
	return failedCall(ref.ID, work.ErrCancelled, end)
}

// failedCall answers a child call that failed with err (an engine error):
// its error object, and the call's end with outcome failed and the
// failure's class (a child's, or the error's code).
func failedCall(workID string, err error, end func(observe.ToolCallEnd)) string {
	o := fromWork(err)
	class := o.Code
	var we *work.Error
	if errors.As(err, &we) && we.Class != "" {
		class = we.Class
	}
	end(observe.ToolCallEnd{WorkID: workID, Outcome: "failed", ErrorClass: class})
	return o.JSON()
}
