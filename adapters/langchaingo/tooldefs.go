package langchaingo

import (
	"maps"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentwork/agentwork/middleware"
)

// updateSchema is emit_update's real input schema, which a child's
// function-calling agent would otherwise declare as the fixed __arg1
// string.
var updateSchema = middleware.UpdateTool().(middleware.Schemer).Schema()

// toolCache is what toolOptions made of one list of function definitions.
type toolCache struct {
	fns     []llms.FunctionDefinition // the request's, as given
	updates bool                      // emit_update got its real schema
	opts    []llms.CallOption         // WithFunctions and WithTools
}

// toolOptions passes the request's function definitions (with real
// schemas on a coordinator, and for emit_update in the run of a child that
// declares updates, where no authored tool has that name) as Functions,
// and as Tools except to the OpenAI client. A child's request that carries
// only Tools is left as it is.
func (m *Model) toolOptions(opts []llms.CallOption, co llms.CallOptions, updates bool) []llms.CallOption {
	fns := co.Functions
	if len(fns) == 0 {
		if m.kit == nil {
			return opts
		}
		for _, t := range co.Tools {
			if t.Function != nil {
				fns = append(fns, *t.Function)
			}
		}
	}
	if c := m.tools.Load(); c != nil && c.updates == updates && sameFunctions(c.fns, fns) {
		return append(opts[:len(opts):len(opts)], c.opts...)
	}
	out := make([]llms.FunctionDefinition, len(fns))
	ts := make([]llms.Tool, len(fns))
	for i, f := range fns {
		if m.kit != nil {
			if s, ok := m.kit.schemas[strings.ToUpper(f.Name)]; ok {
				f.Parameters = s
			}
		}
		if updates && strings.EqualFold(f.Name, middleware.UpdateToolName) {
			f.Parameters = updateSchema
		}
		out[i] = f
		ts[i] = llms.Tool{Type: "function", Function: &out[i]}
	}
	add := []llms.CallOption{llms.WithFunctions(out), llms.WithTools(ts)}
	if isOpenAI(m.inner) {
		// langchaingo's OpenAI client sends Functions and Tools both as
		// tools: passing both would declare every tool twice, so any Tools
		// the caller passed are cleared.
		add[1] = llms.WithTools(nil)
	}
	m.tools.Store(&toolCache{fns: slices.Clone(fns), updates: updates, opts: add})
	return append(opts[:len(opts):len(opts)], add...)
}

// sameFunctions reports whether two lists of function definitions are
// equal, comparing parameters as JSON values (an agent rebuilds them on
// every request). Values it cannot compare make them differ.
func sameFunctions(a, b []llms.FunctionDefinition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || a[i].Strict != b[i].Strict ||
			!sameJSON(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// sameJSON compares the JSON-like values a schema is built from without
// allocating; anything else compares unequal.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]string:
		y, ok := b.(map[string]string)
		return ok && maps.Equal(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	}
	return false
}
