// Package boundary is an adapter's side of the engine. For a child run:
// what an adapter for an agent framework (langchaingo, Eino, or one of
// your own) calls at the child's model-request and tool-call boundaries,
// with the child's work.Execution (work.ExecutionFrom of the child's
// context); the budget, the final request, guidance and the wait of an
// open question are decided there, the same way under every engine. For
// the coordinator: the reads of an engine that its status block and its
// settlement reader make (Rows, Live, Settled), and the clock and
// Observer that layers above the engine report through (Now, Observer).
// Applications and function children do not need it.
package boundary

import (
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/seam"
)

// Turn is the boundary's answer to a child's model request.
type Turn struct {
	// Final is set for the child's final request: the adapter sends it
	// with no tools and an instruction to answer now, and its answer is
	// the child's output.
	Final bool
	// Budget names the budget that ran out (observe.BudgetTurns,
	// observe.BudgetToolCalls or observe.BudgetTokens) when Final is set or the request is refused.
	Budget string
}

// BeginRequest is called by a child's agent adapter before each model
// request (its model-request boundary). While no budget has run out it
// counts one turn and returns the zero Turn: an ordinary request. Every
// request it grants (ordinary or final) also adds one to the Work's
// ModelRequests progress count, as work.ReportProgress reports. Once the
// turns are used up, or the tool calls or tokens reached their limit, it
// returns a Turn with Final set, once; every later request is refused with
// work.ErrBudgetExhausted, and so is the first when the Work was started to
// fail on exhaustion (work.Spec.FailOnBudget). A refused child that returns an
// error fails with class budget_exhausted.
//
// When the child has a question open (work.ReportUpdate with question set),
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
// It is safe for concurrent use, does not allocate on the ordinary path and
// never takes the engine's lock except to report the exhaustion, to wait
// for a slot or to wait for an answer. Outside a child run (no budget) it
// always returns the zero Turn.
func BeginRequest(ex *work.Execution) (Turn, error) {
	t, err := seam.BeginRequest(ex)
	return Turn(t), err
}

// EndRequest is called by the adapter after each model response with the
// tokens the provider reported. known is false when the response carried
// no usage: its tokens count as unknown (observe.Usage.UnknownUsage), and the run's
// token reservation then stays charged in full at settlement.
func EndRequest(ex *work.Execution, inputTokens, outputTokens int64, known bool) {
	seam.EndRequest(ex, inputTokens, outputTokens, known)
}

// ToolCallsLeft returns how many more tool calls the child may make: -1
// when they are not limited, 0 once its final request was granted. An
// adapter drops a response's tool calls beyond it, so that a child never
// makes more than its limit.
func ToolCallsLeft(ex *work.Execution) int { return seam.ToolCallsLeft(ex) }

// BeginToolCall is called by the adapter before each tool call of the
// child's agent. It counts the call (against the budget, and in the Work's
// ToolCalls progress count) and returns true, or returns false (counting
// nothing) when the tool-call budget is used up or the final request was
// granted: the adapter then does not run the tool.
func BeginToolCall(ex *work.Execution) bool { return seam.BeginToolCall(ex) }

// Guidance drains the child's mailbox: it returns the guidance accepted
// since the last call, in order, and the engine keeps no copy. A child calls
// it at each model-request boundary. It returns nil for a foreground call
// and when there is none.
func Guidance(ex *work.Execution) []string { return seam.Guidance(ex) }

// Unanswered returns the sequence numbers of the child's questions whose
// wait ended without an answer (their timeout passed) since the last call,
// and forgets them: the adapter frames a "no answer" note into the
// child's next request for them. nil when there are none.
func Unanswered(ex *work.Execution) []int { return seam.Unanswered(ex) }

// CallError is the error a foreground call of a child returns when the
// child ends as st says: work.ErrChildFailed with st.Class (class error
// when it has none) for failed Work, work.ErrCancelled for cancelled
// Work, and nil for any other state. An adapter that awaited a Work in
// place of a foreground call (the middleware's auto-background option)
// answers with it as the call would have.
func CallError(st work.Status) error { return seam.CallError(st) }
