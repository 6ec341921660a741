package temporal

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// launchInfo is what a Work's events need of its launch, carried in the
// Work workflow's input: the launching span's W3C trace context (its
// traceparent, and its tracestate when the tracer set one) and the
// target's telemetry identity.
type launchInfo struct {
	Trace    map[string]string `json:",omitempty"`
	AgentID  string            `json:",omitempty"`
	Provider string            `json:",omitempty"`
}

func newLaunchInfo(ctx context.Context) launchInfo {
	var l launchInfo
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		l.Trace = map[string]string{}
		propagation.TraceContext{}.Inject(ctx, propagation.MapCarrier(l.Trace))
	}
	l.AgentID, l.Provider = driver.LaunchTarget(ctx)
	return l
}

// caller rebuilds the launching call's context for Observer.Bind: the
// launch span as a remote parent (a link target) and the target's info.
func (l launchInfo) caller() context.Context {
	ctx := context.Background()
	if len(l.Trace) > 0 {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(l.Trace))
	}
	return driver.WithLaunchTarget(ctx, l.AgentID, l.Provider)
}

// lifecycle reports one Work's lifecycle events, from its workflow, to the
// Observer of the Worker that runs the workflow task, as the package
// doc's Telemetry says: each decided by the workflow and stamped with
// workflow time; a replayed Work bound, and its replayed events handed to
// Observer.Replay (an observe.Replayer; nowhere otherwise), only at its
// first live event, and never again once its terminal event is replayed
// (the process that reported it live exported the span); at least once,
// except on the Worker that reported the run's terminal event (spanStash).
type lifecycle struct {
	obs    observe.Observer // nil: nothing to report
	ctx    context.Context
	launch launchInfo
	base   observe.Event
	queued observe.Event // what Bind gets
	// Replayed events not yet given to Replay (the Work is not bound
	// yet), and whether a replayed terminal event ended the span elsewhere.
	replayed []observe.Event
	ended    bool
	// dup: the terminal event this Worker reported live already for this
	// run (bind; nil: none), and first the event the run would bind with.
	dup   *observe.Event
	first observe.Event
	run   string // the workflow run's id: what spanStash.end keys
	// stash keeps the Work's span context across continue-as-new in this
	// process (workflow_job.go); nil: none.
	stash *spanStash
}

func newLifecycle(ctx workflow.Context, obs observe.Observer, in workInput, stash *spanStash) *lifecycle {
	l := &lifecycle{ctx: context.Background(), launch: in.Launch, stash: stash, run: workflow.GetInfo(ctx).WorkflowExecution.RunID,
		base: observe.Event{WorkID: in.ID, Owner: in.Owner, Depth: in.Depth, Target: in.Label, Kind: in.Kind}}
	if _, nop := obs.(observe.NopObserver); nop || obs == nil {
		return l
	}
	l.obs = obs
	q := observe.Event{Type: observe.EventQueued, To: work.StateQueued, Time: in.Created}
	l.queued = l.fill(q)
	if in.Cont == nil { // a continued run's Work was queued in its first run
		l.emit(ctx, q)
	}
	return l
}

func (l *lifecycle) fill(e observe.Event) observe.Event {
	b := l.base
	e.WorkID, e.Owner, e.Depth, e.Target, e.Kind = b.WorkID, b.Owner, b.Depth, b.Target, b.Kind
	return e
}

// emit reports e (stamped now in workflow time unless it has a time).
func (l *lifecycle) emit(ctx workflow.Context, e observe.Event) {
	if l.obs == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = workflow.Now(ctx)
	}
	e = l.fill(e)
	terminal := e.To.Terminal() && e.Type == observe.EventType(e.To)
	if workflow.IsReplaying(ctx) {
		if _, ok := l.obs.(observe.Replayer); ok && !l.ended {
			l.replayed = append(l.replayed, e)
		}
		if terminal {
			l.ended, l.replayed = true, nil
		}
		return
	}
	if l.bind(); l.dup != nil {
		// This Worker reported the run's end already: what the lost task
		// reported is not reported again, up to its end. An end that
		// differs (the task, run anew later, decided otherwise) is
		// reported, on a span of its own: at least once.
		if !terminal {
			return
		}
		same := e.To == l.dup.To && e.ErrorClass == l.dup.ErrorClass
		l.dup = nil
		if same {
			l.ended = true
			return
		}
		l.ctx = l.bindCtx(l.first)
	}
	l.obs.Event(l.ctx, e)
	if terminal {
		l.stash.end(l.run, e)
	}
}

// bind binds the Work at its first live event and replays what was
// replayed before it. A run whose terminal event this Worker reported
// live already (a lost workflow task run again here) is not bound: dup
// is that event (see emit).
func (l *lifecycle) bind() {
	if l.queued.Type == "" {
		return
	}
	q := l.queued
	l.queued = observe.Event{}
	if l.ended {
		return
	}
	if end, ok := l.stash.ended(l.run); ok {
		l.dup, l.first, l.replayed = &end, q, nil
		return
	}
	l.ctx = l.bindCtx(q)
	if r, ok := l.obs.(observe.Replayer); ok {
		for _, e := range l.replayed {
			r.Replay(l.ctx, e)
		}
	}
	l.replayed = nil
}
