package eino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work/observe"
)

// einoTool is a prepared tool (a child, the work tool, emit_update) as an
// Eino tool.InvokableTool. Each call carries the provider-issued
// tool-call id (compose.GetToolCallID) as its identity, and a child's
// call what telemetry may know of its target.
type einoTool struct {
	t      middleware.Tool
	info   *schema.ToolInfo
	target observe.TargetInfo
	traced bool // a callbacks.Handler makes the call's span (WithoutToolSpans)
}

var _ tool.InvokableTool = (*einoTool)(nil)

func newTool(t middleware.Tool, target observe.TargetInfo) (*einoTool, error) {
	info, err := toolInfo(t.Name(), t.Description(), schemaOf(t))
	if err != nil {
		return nil, err
	}
	return &einoTool{t: t, info: info, target: target}, nil
}

func schemaOf(t middleware.Tool) map[string]any {
	if s, ok := t.(middleware.Schemer); ok {
		return s.Schema()
	}
	return nil
}

// toolInfo builds an Eino ToolInfo with schema as its parameters' JSON
// schema (nil: none).
func toolInfo(name, desc string, s map[string]any) (*schema.ToolInfo, error) {
	info := &schema.ToolInfo{Name: name, Desc: desc}
	if s == nil {
		return info, nil
	}
	js, err := jsonSchema(s)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: schema: %v", middleware.ErrInvalidSchema, name, err)
	}
	info.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(js)
	return info, nil
}

// jsonSchema converts a JSON schema map to the schema type Eino uses.
func jsonSchema(s map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	js := &jsonschema.Schema{}
	if err := json.Unmarshal(b, js); err != nil {
		return nil, err
	}
	return js, nil
}

// Info returns the prepared tool's name, description and real schema.
func (t *einoTool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun calls the prepared tool. It never returns a Go error (an
// Eino agent would end its run on one): bad input and failures come back
// as the error object.
func (t *einoTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	if ctx == nil {
		return t.t.Call(ctx, args)
	}
	if t.target != (observe.TargetInfo{}) {
		ctx = observe.WithTargetInfo(ctx, t.target)
	}
	if id := compose.GetToolCallID(ctx); id != "" {
		ctx = middleware.WithCallID(ctx, id)
	}
	if t.traced {
		ctx = observe.WithToolCallTraced(ctx)
	}
	return t.t.Call(ctx, args)
}
