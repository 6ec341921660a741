package eino

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/agentwork/agentwork/middleware"
)

// childRun is one run of an agent child, in its context: what the
// child's middleware needs to know of it.
type childRun struct {
	updates bool        // the child declares updates: add emit_update
	carried atomic.Bool // an agentwork Middleware ran in the child's agent

	mu    sync.Mutex
	final string // the answer to the child's final request
	fset  bool
}

type childRunKey struct{}

func childRunFrom(ctx context.Context) *childRun {
	cr, _ := ctx.Value(childRunKey{}).(*childRun)
	return cr
}

// runAgent runs agent with input as its one user message, on ctx (the
// child's own: the engine gave it none of the caller's values), and
// returns the text of its last assistant message. When the child's budget
// ran out and the agent ended with an error after its final request, the
// final request's answer is the output.
func runAgent(ctx context.Context, agent adk.Agent, input string, updates, needMiddleware bool) (string, error) {
	cr := &childRun{updates: updates}
	ctx = context.WithValue(ctx, childRunKey{}, cr)
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	iter := runner.Run(ctx, []adk.Message{schema.UserMessage(input)})
	out, runErr := collect(iter)
	if needMiddleware && !cr.carried.Load() && ctx.Err() == nil {
		return "", ErrNoChildMiddleware
	}
	if runErr != nil {
		cr.mu.Lock()
		final, set := cr.final, cr.fset
		cr.mu.Unlock()
		if set && ctx.Err() == nil {
			return final, nil
		}
		return "", runErr
	}
	return out, nil
}

// captureFinal records the answer to the child's final request.
func captureFinal(ctx context.Context, text string) {
	if cr := childRunFrom(ctx); cr != nil {
		cr.mu.Lock()
		cr.final, cr.fset = text, true
		cr.mu.Unlock()
	}
}

// withUpdateTool returns ts with emit_update added; an authored tool of
// that name (in any case) is an error.
func withUpdateTool(ctx context.Context, ts []tool.BaseTool) ([]tool.BaseTool, error) {
	for _, t := range ts {
		if t == nil {
			continue
		}
		if et, ok := t.(*einoTool); ok && et.t.Name() == middleware.UpdateToolName {
			return ts, nil // already added
		}
		info, err := t.Info(ctx)
		if err == nil && info != nil && strings.EqualFold(info.Name, middleware.UpdateToolName) {
			return nil, errors.Join(middleware.ErrUpdateToolName,
				errors.New(`eino: the child's agent already has a tool named "`+info.Name+`"`))
		}
	}
	et, err := newTool(middleware.UpdateTool(), emptyTarget)
	if err != nil {
		return nil, err
	}
	return append(ts[:len(ts):len(ts)], et), nil
}
