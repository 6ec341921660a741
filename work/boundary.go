package work

import "github.com/agentwork/agentwork/work/observe"

// Turn is the boundary's answer to a child's model request.
type Turn struct {
	// Final is set for the child's final request: the adapter sends it
	// with no tools and an instruction to answer now, and its answer is
	// the child's output.
	Final bool
	// Budget names the budget that ran out (BudgetTurns, BudgetToolCalls
	// or BudgetTokens) when Final is set or the request is refused.
	Budget string
}

// BeginRequest is called by a child's agent adapter before each model
// request (its model-request boundary). While no budget has run out it
// counts one turn and returns the zero Turn: an ordinary request. Every
// request it grants (ordinary or final) also adds one to the Work's
// ModelRequests progress count, as ReportProgress reports. Once the
// turns are used up, or the tool calls or tokens reached their limit, it
// returns a Turn with Final set, once; every later request is refused with
// ErrBudgetExhausted, and so is the first when the Work was started to
// fail on exhaustion (Spec.FailOnBudget). A refused child that returns an
// error fails with class budget_exhausted.
//
// When the child has a question open (ReportUpdate with question set),
// BeginRequest first waits, holding the child's running slot, until
// guidance arrives for the Work, the question's timeout passes (then
// Unanswered reports it) or the child's context ends (see "Updates and
// questions" in docs/engine.md); an adapter calls Guidance after it.
//
// It is also where a child reclaims its running slot: when the Work it
// runs on lent its slot for a Result wait that ended while a descendant
// still runs on it, BeginRequest first blocks until that Work has a slot
// again, or until the child's context ends (see "Running slots" in
// docs/engine.md).
//
// It is safe for concurrent use, does not allocate on the ordinary path
// and never takes the Supervisor's lock except to report the exhaustion,
// to wait for a slot or to wait for an answer. Outside a child run (no
// budget) it always returns the zero Turn.
func (e *Execution) BeginRequest() (Turn, error) {
	t, err := e.beginRequest()
	if err == nil {
		e.countRequest()
	}
	return t, err
}

// beginRequest is BeginRequest's budget decision.
func (e *Execution) beginRequest() (Turn, error) {
	if e == nil {
		return Turn{}, nil
	}
	r := e.run()
	if r == nil {
		return Turn{}, nil
	}
	e.rt.awaitQuestion()
	e.rt.awaitSlot()
	r.mu.Lock()
	if r.phase != phaseOrdinary {
		r.phase = phaseRefused
		b := r.exhaustedLocked()
		r.mu.Unlock()
		return Turn{Budget: b}, errorf(ErrBudgetExhausted, "the %s budget is used up and the final request was made", b)
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
			return Turn{Budget: b}, errorf(ErrBudgetExhausted, "the %s budget is used up", b)
		}
		return Turn{Final: true, Budget: b}, nil
	}
	r.ownTurns.Add(1)
	r.m[dimTurns].used.Add(1)
	r.mu.Unlock()
	return Turn{}, nil
}

// EndRequest is called by the adapter after each model response with the
// tokens the provider reported. known is false when the response carried
// no usage: its tokens count as unknown (Usage.UnknownUsage), and the run's
// token reservation then stays charged in full at settlement.
func (e *Execution) EndRequest(inputTokens, outputTokens int64, known bool) {
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

// ToolCallsLeft returns how many more tool calls the child may make: -1
// when they are not limited, 0 once its final request was granted. An
// adapter drops a response's tool calls beyond it, so that a child never
// makes more than its limit.
func (e *Execution) ToolCallsLeft() int {
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

// BeginToolCall is called by the adapter before each tool call of the
// child's agent. It counts the call (against the budget, and in the Work's
// ToolCalls progress count) and returns true, or returns false (counting
// nothing) when the tool-call budget is used up or the final request was
// granted: the adapter then does not run the tool.
func (e *Execution) BeginToolCall() bool {
	ok := e.beginToolCall()
	if ok {
		e.countTool()
	}
	return ok
}

// beginToolCall is BeginToolCall's budget decision.
func (e *Execution) beginToolCall() bool {
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
func (e *Execution) Usage() Usage {
	if e == nil {
		return Usage{}
	}
	return e.run().usage()
}

// report delivers a budget event of r.
func (r *run) report(ev observe.Event) {
	if r.rt != nil {
		r.rt.runEvent(ev)
	}
}
