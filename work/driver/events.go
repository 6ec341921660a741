package driver

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Transition returns e as the event of a change from one state to
// another: its Type, From and To set, and a cancel with no class of its
// own classed work.ClassCancelled, as in-process.
func Transition(from, to observe.State, e observe.Event) observe.Event {
	e.Type, e.From, e.To = observe.EventType(to), from, to
	if to == work.StateCancelled && e.ErrorClass == "" {
		e.ErrorClass = work.ClassCancelled
	}
	return e
}

// LaunchTarget returns the agent id and provider of the observe.TargetInfo
// a launch's ctx carries (what telemetry knows of its target), for a
// Work's input to carry to the process that reports its events.
func LaunchTarget(ctx context.Context) (agentID, provider string) {
	info, _ := observe.TargetInfoFrom(ctx)
	return info.AgentID, info.Provider
}

// WithLaunchTarget returns ctx carrying the launch's target info again
// (LaunchTarget), as the caller context of the Work's Observer.Bind; ctx
// itself when both are empty.
func WithLaunchTarget(ctx context.Context, agentID, provider string) context.Context {
	if agentID == "" && provider == "" {
		return ctx
	}
	return observe.WithTargetInfo(ctx, observe.TargetInfo{AgentID: agentID, Provider: provider})
}

// progressGate returns the Remote.Event of an attempt of a Work of
// target label and kind: it reports the child's progress events to obs
// until end is called (none after the child returned); other events are
// the Work's workflow's to report.
func progressGate(obs observe.Observer, label string, kind observe.Kind) (emit func(observe.Event), end func()) {
	var ended atomic.Bool
	return func(ev observe.Event) {
		if ev.Type == observe.EventProgress && !ended.Load() {
			ev.Target, ev.Kind = label, kind
			obs.Event(context.Background(), ev)
		}
	}, func() { ended.Store(true) }
}

// UpdateRefused reports an update a child's attempt refused itself
// (reason, a work.UpdateRefused* class; never the value) and returns the
// refusal as Remote.Update answers it. obs nil reports nothing.
func UpdateRefused(obs observe.Observer, a Attempt, bytes int, question bool, reason string) (work.UpdateReceipt, string) {
	if obs == nil {
		return work.UpdateReceipt{}, reason
	}
	obs.Event(context.Background(), observe.Event{Type: observe.EventUpdate, WorkID: a.ID, Owner: a.Owner, Depth: a.Depth,
		Target: a.Label, Kind: a.Kind, Time: time.Now(), Bytes: bytes, Question: question, ErrorClass: reason})
	return work.UpdateReceipt{}, reason
}
