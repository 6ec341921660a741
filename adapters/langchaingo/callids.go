package langchaingo

import (
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// callIDs assigns tool-call identities: the ids the provider issued in the
// model's last response (OpenAIFunctionsAgent's tool calls), matched to
// the tool calls by name in order, each used once. A call with no
// provider-issued id (a text agent's: OneShot, Conversational) gets none:
// such a call is never deduplicated and reports no gen_ai.tool.call.id. No
// id is ever made up: a counter-based one would repeat across Kits with the
// same owner, or across executors sharing a Kit, and make one launch replay
// another's.
type callIDs struct {
	mu      sync.Mutex
	pending []pendingCall
}

type pendingCall struct{ name, id string }

func (c *callIDs) step(resp *llms.ContentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = c.pending[:0]
	if resp == nil || len(resp.Choices) == 0 {
		return
	}
	for _, tc := range resp.Choices[0].ToolCalls {
		if tc.FunctionCall != nil && tc.ID != "" {
			c.pending = append(c.pending, pendingCall{tc.FunctionCall.Name, tc.ID})
		}
	}
}

// next returns the provider-issued identity of the next call of the tool
// named name, or "" when it has none.
func (c *callIDs) next(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.pending {
		if strings.EqualFold(p.name, name) {
			c.pending = c.pending[i+1:]
			return p.id
		}
	}
	return ""
}
