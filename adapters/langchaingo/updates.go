package langchaingo

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/prompts"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// WithUpdates declares that the child reports bounded, ordered updates
// while it runs, and may ask its supervisor a question (p's zero fields
// take the defaults: 32 updates and 16 KiB of encoded payload per run,
// a question timeout of 10 minutes; a field over its ceiling or
// negative fails Prepare with middleware.ErrInvalidChild).
//
// An agent child (FromExecutor, NewAgent) then gets one automatic tool,
// emit_update (middleware.UpdateTool): its agent's tools gain it on each
// run, and a text agent's prompt lists it. An authored tool named
// emit_update (in any case) in a FromExecutor child's agent fails
// Prepare (middleware.ErrUpdateToolName); in a NewAgent child's, built
// at each run, it fails that run. A retried emit_update call with the
// same provider-issued tool-call id (OpenAIFunctionsAgent) is accepted
// once; a text agent's call has no id, so its "key" field (or else a
// random key) is the idempotency key. A foreground call of the child has
// no Work to keep updates: its emit_update calls are refused with reason
// not_declared.
//
// A function child (NewFunction, FromTool) reports with
// work.ReportUpdate(ctx, key, value, question) on its own context, and
// waits for the answer to a question with work.AwaitAnswer(ctx).
//
// The application reads the updates by cursor (work.Engine.Updates)
// and is told of each with a work.Notice of kind work.NoticeUpdate; the
// coordinator's model sees them only with ReportUpdates.
func WithUpdates(p work.UpdatePolicy) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.Updates = &p })
}

// ReportUpdates hands the child's updates to the coordinator too:
// RunUntilSettled gives the updates accepted since the last resume to the
// next resume (a settlement's or a question's), as a separate user
// message of untrusted child content (middleware.UpdatesBlock), never in
// the settlement notice or the status block, never into a request
// already sent. An update alone does not resume the coordinator; a
// question of a Work still live does. pred, when not nil, chooses the
// updates reported (it must be pure: it may be asked about one update
// more than once); nil reports all. The child must also declare updates
// (WithUpdates), or Prepare fails with middleware.ErrInvalidChild. On an
// engine whose Updates answers an error, no update reaches the
// coordinator.
func ReportUpdates(pred func(work.Update) bool) ChildOption {
	return childOptionFunc(func(c *middleware.Child) { c.ReportUpdates, c.UpdateFilter = true, pred })
}

// updateCollision returns the name of a tool among ts that collides with
// emit_update (langchaingo looks tools up case-insensitively), or "".
func updateCollision(ts []tools.Tool) string {
	for _, t := range ts {
		if t != nil && strings.EqualFold(t.Name(), middleware.UpdateToolName) {
			if _, ours := t.(updateCallTool); !ours {
				return t.Name()
			}
		}
	}
	return ""
}

func errUpdateCollision(name string) error {
	return prepErr(middleware.ErrUpdateToolName, "langchaingo: the child's agent already has a tool named %q, which collides with the automatic %q tool of a child that declares updates", name, middleware.UpdateToolName)
}

// updateCallTool is emit_update in a child's agent: each call carries the
// provider-issued id of its tool call, when the run's model reply had
// one.
type updateCallTool struct{ middleware.Tool }

func (t updateCallTool) Call(ctx context.Context, input string) (string, error) {
	if ctx != nil {
		if ids, ok := ctx.Value(runIDsKey{}).(*callIDs); ok {
			ctx = middleware.WithCallID(ctx, ids.next(t.Name()))
		}
	}
	return t.Tool.Call(ctx, input)
}

func (t updateCallTool) Schema() map[string]any { return t.Tool.(middleware.Schemer).Schema() }

// runIDsKey is the context key of a child run's tool-call ids: the
// child's wrapped model records its replies' ids (Model.GenerateContent),
// and emit_update takes them.
type runIDsKey struct{}

// withUpdateTool returns a known agent (a copy wrapAgentModel made) with
// emit_update added to its tools and, for a text agent, to the tool list
// of its prompt. It fails when an authored tool collides with it.
func withUpdateTool(a agents.Agent) (agents.Agent, error) {
	t := updateCallTool{middleware.UpdateTool()}
	switch ag := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		if n := updateCollision(ag.Tools); n != "" {
			return nil, errUpdateCollision(n)
		}
		ag.Tools = append(ag.Tools[:len(ag.Tools):len(ag.Tools)], t)
	case *agents.OneShotZeroAgent:
		if n := updateCollision(ag.Tools); n != "" {
			return nil, errUpdateCollision(n)
		}
		ag.Tools = append(ag.Tools[:len(ag.Tools):len(ag.Tools)], t)
		ag.Chain = listTool(ag.Chain, t)
	case *agents.ConversationalAgent:
		if n := updateCollision(ag.Tools); n != "" {
			return nil, errUpdateCollision(n)
		}
		ag.Tools = append(ag.Tools[:len(ag.Tools):len(ag.Tools)], t)
		ag.Chain = listTool(ag.Chain, t)
	}
	return a, nil
}

// listTool returns a copy of a text agent's chain whose prompt lists t
// too: langchaingo renders the tool names and descriptions into the
// prompt's partial variables when it builds the agent. A prompt without
// them is left as it is.
func listTool(c chains.Chain, t tools.Tool) chains.Chain {
	lc, ok := c.(*chains.LLMChain)
	if !ok {
		return c
	}
	p, ok := lc.Prompt.(prompts.PromptTemplate)
	if !ok {
		return c
	}
	names, ok1 := p.PartialVariables["tool_names"].(string)
	descs, ok2 := p.PartialVariables["tool_descriptions"].(string)
	if !ok1 || !ok2 {
		return c
	}
	pv := make(map[string]any, len(p.PartialVariables))
	for k, v := range p.PartialVariables {
		pv[k] = v
	}
	if names != "" {
		names += ", "
	}
	pv["tool_names"] = names + t.Name()
	pv["tool_descriptions"] = descs + "- " + t.Name() + ": " + t.Description() + "\n"
	p.PartialVariables = pv
	cp := *lc
	cp.Prompt = p
	return &cp
}
