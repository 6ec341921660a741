//lint:file-ignore U1000 the fake ChatModelAgent layouts are read by reflection only

package eino_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestEinoLayout pins what the adapter reads of an *adk.ChatModelAgent by
// reflection to the Eino it is built against: its handlers and its model,
// with their types. An Eino upgrade that moves or retypes them fails here
// (and FromAgent then refuses ChatModelAgents with ErrEinoLayout) instead
// of silently making agent children function children.
func TestEinoLayout(t *testing.T) {
	if err := eino.CheckLayoutForTest(reflect.TypeFor[adk.ChatModelAgent]()); err != nil {
		t.Fatalf("the linked Eino's ChatModelAgent: %v", err)
	}
	// The check itself: layouts an upgrade could bring are refused.
	type moved struct {
		middlewares []adk.ChatModelAgentMiddleware
		model       model.BaseChatModel
	}
	type retyped struct {
		handlers []any
		model    model.BaseChatModel
	}
	type noModel struct {
		handlers []adk.ChatModelAgentMiddleware
		chat     model.BaseChatModel
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[moved](), reflect.TypeFor[retyped](), reflect.TypeFor[noModel](), reflect.TypeFor[*moved]()} {
		if err := eino.CheckLayoutForTest(typ); !errors.Is(err, eino.ErrEinoLayout) {
			t.Errorf("layout %v: err = %v, want ErrEinoLayout", typ, err)
		}
	}
	// What the reads decide, on this Eino.
	withMW := newAgent(t, "with", scripted.New(), []tool.BaseTool{}, eino.ChildMiddleware())
	without := newAgent(t, "without", scripted.New(), []tool.BaseTool{})
	for _, tc := range []struct {
		agent adk.Agent
		want  observe.Kind
	}{
		{withMW, work.KindAgent},
		{without, work.KindFunction},
	} {
		if got := eino.FromAgent(tc.agent).Kind(); got != tc.want {
			t.Errorf("FromAgent(%s).Kind() = %v, want %v", tc.agent.Name(t.Context()), got, tc.want)
		}
	}
}
