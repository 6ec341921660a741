package work

import (
	"github.com/agentwork/agentwork/work/internal/seam"
	"github.com/agentwork/agentwork/work/observe"
)

// work/boundary is an agent adapter's side of a child's Execution.
func init() {
	ex := func(e any) *Execution { x, _ := e.(*Execution); return x }
	seam.BeginRequest = func(e any) (seam.Turn, error) { return ex(e).beginRequest() }
	seam.EndRequest = func(e any, in, out int64, known bool) { ex(e).endRequest(in, out, known) }
	seam.ToolCallsLeft = func(e any) int { return ex(e).toolCallsLeft() }
	seam.BeginToolCall = func(e any) bool { return ex(e).beginToolCall() }
	seam.Guidance = func(e any) []string { return ex(e).guidance() }
	seam.Unanswered = func(e any) []int { return ex(e).unanswered() }
}

// beginRequest is work/boundary's BeginRequest (which documents it).
func (e *Execution) beginRequest() (seam.Turn, error) {
	t, err := e.decideRequest()
	if err == nil {
		e.countRequest()
	}
	return t, err
}

// decideRequest is beginRequest's budget decision.
func (e *Execution) decideRequest() (seam.Turn, error) {
	if e == nil {
		return seam.Turn{}, nil
	}
	r := e.run()
	if r == nil {
		return seam.Turn{}, nil
	}
	e.rt.awaitQuestion()
	e.rt.awaitSlot()
	r.mu.Lock()
	if r.phase != phaseOrdinary {
		r.phase = phaseRefused
		b := r.exhaustedLocked()
		r.mu.Unlock()
		return seam.Turn{Budget: b}, errorf(ErrBudgetExhausted, "the %s budget is used up and the final request was made", b)
	}
	first := false
	if r.exh.Load() == 0 {
		if b := r.reached(); b != "" {
			first = r.exhaustLocked(b)
		}
	}
	if b := r.exhaustedLocked(); b != "" {
		fail := r.fail
		if fail {
			r.phase = phaseRefused
		} else {
			r.phase = phaseFinal
		}
		r.mu.Unlock()
		if first {
			r.report(observe.Event{Type: observe.EventBudgetExhausted, Budget: b})
		}
		if fail {
			return seam.Turn{Budget: b}, errorf(ErrBudgetExhausted, "the %s budget is used up", b)
		}
		return seam.Turn{Final: true, Budget: b}, nil
	}
	r.ownTurns.Add(1)
	r.m[dimTurns].used.Add(1)
	r.mu.Unlock()
	return seam.Turn{}, nil
}

// endRequest is work/boundary's EndRequest (which documents it).
func (e *Execution) endRequest(inputTokens, outputTokens int64, known bool) {
	if e == nil {
		return
	}
	r := e.run()
	if r == nil {
		return
	}
	if !known {
		r.unknown.Add(1)
		return
	}
	inputTokens, outputTokens = max(inputTokens, 0), max(outputTokens, 0)
	r.in.Add(inputTokens)
	r.out.Add(outputTokens)
	r.m[dimTokens].used.Add(inputTokens + outputTokens)
}

// toolCallsLeft is work/boundary's ToolCallsLeft (which documents it).
func (e *Execution) toolCallsLeft() int {
	if e == nil {
		return -1
	}
	r := e.run()
	if r == nil {
		return -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseOrdinary {
		return 0
	}
	if a := r.avail(dimToolCalls); a >= 0 {
		return int(a)
	}
	return -1
}

// beginToolCall is work/boundary's BeginToolCall (which documents it).
func (e *Execution) beginToolCall() bool {
	ok := e.decideToolCall()
	if ok {
		e.countTool()
	}
	return ok
}

// decideToolCall is beginToolCall's budget decision.
func (e *Execution) decideToolCall() bool {
	if e == nil {
		return true
	}
	r := e.run()
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseOrdinary {
		return false
	}
	if m := &r.m[dimToolCalls]; m.limit > 0 && m.used.Load()+m.held.Load() >= m.limit {
		return false
	}
	r.ownTools.Add(1)
	r.m[dimToolCalls].used.Add(1)
	return true
}

// Usage returns what the child has spent so far.
func (e *Execution) Usage() observe.Usage {
	if e == nil {
		return observe.Usage{}
	}
	return e.run().usage()
}

// report delivers a budget event of r.
func (r *run) report(ev observe.Event) {
	if r.rt != nil {
		r.rt.runEvent(ev)
	}
}
