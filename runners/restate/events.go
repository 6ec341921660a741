package restate

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// reporter reports Work lifecycle events to the Observer of the process
// that serves the control objects: each Work is bound (Observer.Bind) at
// its first event here, with the launch's trace context, and forgotten at
// its terminal event, so that one span holds a Work's events.
type reporter struct {
	obs  observe.Observer
	mu   sync.Mutex
	ctxs map[string]context.Context
}

func newReporter(obs observe.Observer) *reporter {
	return &reporter{obs: obs, ctxs: map[string]context.Context{}}
}

// traceOf is the launch's trace context, carried in a Work's input.
func traceOf(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := map[string]string{}
	propagation.TraceContext{}.Inject(ctx, propagation.MapCarrier(m))
	return m
}

// emit reports e for Work in with the identity fields filled in.
func (r *reporter) emit(in workInput, e observe.Event) {
	if _, nop := r.obs.(observe.NopObserver); nop || r.obs == nil {
		return
	}
	e.WorkID, e.Owner, e.Depth, e.Target, e.Kind = in.ID, in.Owner, in.Depth, in.Label, in.Kind
	r.mu.Lock()
	ctx, ok := r.ctxs[in.ID]
	if !ok {
		caller := context.Background()
		if len(in.Trace) > 0 {
			caller = propagation.TraceContext{}.Extract(caller, propagation.MapCarrier(in.Trace))
		}
		caller = driver.WithLaunchTarget(caller, in.AgentID, in.Provider)
		q := e
		q.Type, q.From, q.To, q.Time = observe.EventQueued, "", work.StateQueued, in.Created
		ctx = r.obs.Bind(caller, context.Background(), q)
		r.ctxs[in.ID] = ctx
	}
	if e.To.Terminal() && e.Type == observe.EventType(e.To) {
		delete(r.ctxs, in.ID)
	}
	r.mu.Unlock()
	r.obs.Event(ctx, e)
}
