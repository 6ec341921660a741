package middleware

import (
	"context"
	"fmt"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// Boundary is one model request of a child run, as an adapter's model
// wrapper sees it: BeginRequest opens it before the request is sealed,
// End closes it with the response's usage. Every adapter's child model
// follows the same rules through it; the zero Boundary (outside a child
// run) does nothing.
type Boundary struct {
	ex   *work.Execution // nil outside a child run
	turn boundary.Turn
}

// BeginRequest opens a child's model-request boundary, in this order:
// it returns ctx's error when the child's Work was cancelled or its
// deadline passed (the cooperative cancel); asks the child's budget for
// one request (boundary.BeginRequest, which also waits there for
// the answer to a question the child asked with emit_update, and refuses
// a request after the final one with work.ErrBudgetExhausted); counts the
// request as progress; drains the notes the request must carry, as new
// user messages in this order: NoAnswerNote when a question went
// unanswered, then the framed guidance (Guidance); and checks ctx again
// (a durable engine's boundary heartbeat, taken as guidance drains, may
// bring a cancel: the request is then not sent).
//
// When the returned Boundary is Final, the adapter sends the request
// with no tools and FinalInstruction as its last user message, and its
// answer is the child's output. Outside a child run (or with a nil ctx)
// it returns the zero Boundary and no notes.
func BeginRequest(ctx context.Context) (b Boundary, notes []string, err error) {
	if ctx == nil {
		return Boundary{}, nil, nil
	}
	if err := ctx.Err(); err != nil {
		return Boundary{}, nil, err
	}
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return Boundary{}, nil, nil
	}
	turn, err := boundary.BeginRequest(ex)
	if err != nil {
		return Boundary{}, nil, err
	}
	b = Boundary{ex: ex, turn: turn}
	if note := NoAnswer(ctx); note != "" {
		notes = append(notes, note)
	}
	if g := Guidance(ctx); g != "" {
		notes = append(notes, g)
	}
	if err := ctx.Err(); err != nil {
		return Boundary{}, nil, err
	}
	return b, notes, nil
}

// Final reports whether this is the child's final request: its budget ran
// out, and the request goes without tools, asking for an answer now.
func (b Boundary) Final() bool { return b.turn.Final }

// Budget names the budget that ran out when Final is set.
func (b Boundary) Budget() string { return b.turn.Budget }

// InChild reports whether the boundary belongs to a child run.
func (b Boundary) InChild() bool { return b.ex != nil }

// FinalInstruction is the last user message of a final request: it names
// the budget that ran out (FinalInstructionFormat), or "" when b is not
// Final.
func (b Boundary) FinalInstruction() string {
	if !b.turn.Final {
		return ""
	}
	return fmt.Sprintf(FinalInstructionFormat, b.turn.Budget)
}

// FinalInstructionFormat frames the final request of a child whose budget
// ran out, as its last user message; %s is the budget's name.
const FinalInstructionFormat = "[budget] Your %s budget for this task is used up. Do not call any tool. " +
	"Answer now with your final answer, from what you have found so far."

// End closes the boundary with the tokens the provider reported (known
// false: the response carried no usage, counted conservatively, see
// boundary.EndRequest) and returns how many of the response's tool
// calls the adapter keeps: -1 for all, 0 after a final request, else the
// child's tool calls left. Outside a child run it returns -1.
func (b Boundary) End(input, output int64, known bool) (toolCallsLeft int) {
	if b.ex == nil {
		return -1
	}
	boundary.EndRequest(b.ex, input, output, known)
	if b.turn.Final {
		return 0
	}
	return boundary.ToolCallsLeft(b.ex)
}

// ToolNotRun is what a child's agent reads, as the tool's result, for a
// tool call its tool-call budget does not cover: the tool was not run.
const ToolNotRun = "[budget] This tool call was not run: the tool-call budget for this task is used up. Answer now with what you have."

// BeginToolCall is called by an adapter before each tool call of a child
// agent: it counts the call against the child's tool-call budget and as
// progress, and reports whether the tool may run (false: answer the call
// with ToolNotRun instead). Outside a child run it always returns true.
func BeginToolCall(ctx context.Context) bool {
	if ctx == nil {
		return true
	}
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return true
	}
	return boundary.BeginToolCall(ex)
}
