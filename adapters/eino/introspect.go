package eino

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"sync"
	"unsafe"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/eino-contrib/jsonschema"

	"github.com/agentwork/agentwork/work/observe"
)

var emptyTarget observe.TargetInfo

// What the adapter reads of a built *adk.ChatModelAgent, whose
// configuration Eino keeps unexported: whether its Handlers include an
// agentwork Middleware (then it is an agent child, taking guidance), and
// its model (for gen_ai.provider.name), both through reflection, reading
// and never writing. agentLayout names the fields and their types;
// checkLayout checks them against Eino's type once, and FromAgent of a
// ChatModelAgent refuses the agent (ErrEinoLayout) when they moved, so
// that an Eino release that moves them fails loudly (and its test,
// TestEinoLayout) instead of making agent children function children.
var agentLayout = []struct {
	field string
	typ   reflect.Type
}{
	{"handlers", reflect.TypeFor[[]adk.ChatModelAgentMiddleware]()},
	{"model", reflect.TypeFor[model.BaseChatModel]()},
}

// ErrEinoLayout: FromAgent of a *adk.ChatModelAgent on an Eino release
// whose ChatModelAgent no longer keeps its handlers and model where this
// adapter reads them (it is built against Eino v0.9.13).
var ErrEinoLayout = errors.New("eino: this Eino release's ChatModelAgent is not the layout the adapter reads (handlers, model): use the Eino version adapters/eino requires, or an adapter built for this one")

// checkLayout reports whether t (Eino's ChatModelAgent struct type) has
// every field of agentLayout, with its type.
func checkLayout(t reflect.Type) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%w: %v is not a struct", ErrEinoLayout, t)
	}
	for _, f := range agentLayout {
		sf, ok := t.FieldByName(f.field)
		if !ok {
			return fmt.Errorf("%w: %v has no field %s", ErrEinoLayout, t, f.field)
		}
		if sf.Type != f.typ {
			return fmt.Errorf("%w: %v.%s is a %v, want %v", ErrEinoLayout, t, f.field, sf.Type, f.typ)
		}
	}
	return nil
}

// layoutErr is checkLayout of the linked Eino's ChatModelAgent.
var layoutErr = sync.OnceValue(func() error { return checkLayout(reflect.TypeFor[adk.ChatModelAgent]()) })

// carriesMiddleware reports whether agent is a *adk.ChatModelAgent whose
// handlers include a *Middleware.
func carriesMiddleware(agent adk.Agent) bool {
	v, ok := chatModelAgent(agent)
	if !ok || layoutErr() != nil {
		return false
	}
	hs := v.FieldByName("handlers")
	mw := reflect.TypeOf((*Middleware)(nil))
	for i := 0; i < hs.Len(); i++ {
		h := hs.Index(i)
		if h.Kind() == reflect.Interface && !h.IsNil() && h.Elem().Type() == mw {
			return true
		}
	}
	return false
}

// agentProvider returns the GenAI provider name of a ChatModelAgent's
// model (ProviderNameOf), or "".
func agentProvider(agent adk.Agent) string {
	v, ok := chatModelAgent(agent)
	if !ok || layoutErr() != nil {
		return ""
	}
	m := v.FieldByName("model")
	if m.IsNil() || !m.CanAddr() {
		return ""
	}
	// The field is unexported: read it through its address (a copy of
	// the interface value; nothing is written).
	return ProviderNameOf(reflect.NewAt(m.Type(), unsafe.Pointer(m.UnsafeAddr())).Elem().Interface())
}

func chatModelAgent(agent adk.Agent) (reflect.Value, bool) {
	a, ok := agent.(*adk.ChatModelAgent)
	if !ok || a == nil {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(a).Elem(), true
}

// providerNames maps eino-ext's chat model packages
// (github.com/cloudwego/eino-ext/components/model/<name>) to the OTel
// GenAI gen_ai.provider.name values.
var providerNames = map[string]string{
	"openai":     "openai",
	"claude":     "anthropic",
	"ollama":     "ollama",
	"gemini":     "gcp.gemini",
	"deepseek":   "deepseek",
	"qianfan":    "baidu.qianfan",
	"qwen":       "alibaba.dashscope",
	"ark":        "volcengine.ark",
	"arkbot":     "volcengine.ark",
	"openrouter": "openrouter",
}

func providerOfType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return providerNames[path.Base(t.PkgPath())]
}

// ProviderNameOf returns the GenAI provider name of an Eino chat model,
// for gen_ai.provider.name: the model's own ProviderName method when it
// has one, else the name for its eino-ext package (model/openai:
// "openai", model/claude: "anthropic", model/ollama: "ollama",
// model/gemini: "gcp.gemini", ...), else "".
func ProviderNameOf(m any) string {
	if m == nil {
		return ""
	}
	if p, ok := m.(interface{ ProviderName() string }); ok {
		return p.ProviderName()
	}
	return providerOfType(reflect.TypeOf(m))
}

// schemaMap converts Eino's JSON schema type to a JSON schema map.
func schemaMap(js *jsonschema.Schema) (map[string]any, error) {
	b, err := json.Marshal(js)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
