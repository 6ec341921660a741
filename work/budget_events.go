package work

import (
	"context"
	"errors"

	"github.com/agentwork/agentwork/work/observe"
)

// runEvent delivers a budget event of the Work's run, with the
// engine's time (run.report).
func (it *item) runEvent(ev observe.Event) {
	s := it.s
	ev.Time = s.clock.Now()
	s.emitWork(it, ev)
}

// emitWork delivers a background Work's budget event, in order with its
// other events.
func (s *Engine) emitWork(it *item, ev observe.Event) {
	var e emission
	s.mu.Lock()
	if it.terminal() {
		s.mu.Unlock()
		return
	}
	e.add(it, ev)
	s.unlockAndEmit(&e)
}

// foregroundEmitter returns the function that delivers a foreground
// call's budget events, with the call's execution context.
func (s *Engine) foregroundEmitter(exec context.Context, spec Spec) func(observe.Event) {
	return func(ev observe.Event) {
		ev.Owner, ev.Depth, ev.Target, ev.Kind = spec.Owner.id, spec.Owner.depth, spec.Target.Label, spec.Target.Kind
		s.observer.Event(exec, ev)
	}
}

// endRunLocked queues the events of a background run's end: the duration
// budget running out (class deadline_exceeded), then its usage.
func (s *Engine) endRunLocked(it *item, class string, e *emission) {
	r := &it.brun
	now := s.nowLocked(e)
	if class == ClassDeadline {
		r.mu.Lock()
		first := r.exhaustLocked(observe.BudgetDuration)
		r.mu.Unlock()
		if first {
			e.push(it, observe.EventBudgetExhausted, now).Budget = observe.BudgetDuration
		}
	}
	if u := r.usage(); u != (observe.Usage{}) {
		e.push(it, observe.EventUsage, now).Usage = u
	}
}

// endForeground reports a foreground run's end (as endRunLocked does) and
// settles its reservation.
func (s *Engine) endForeground(r *run, scopeID string, exec context.Context) {
	if errors.Is(context.Cause(exec), errDeadline) {
		r.mu.Lock()
		first := r.exhaustLocked(observe.BudgetDuration)
		r.mu.Unlock()
		if first {
			r.report(observe.Event{Type: observe.EventBudgetExhausted, Budget: observe.BudgetDuration})
		}
	}
	if u := r.usage(); u != (observe.Usage{}) {
		r.report(observe.Event{Type: observe.EventUsage, Usage: u})
	}
	s.mu.Lock()
	s.settleRunLocked(r)
	s.mu.Unlock()
}
