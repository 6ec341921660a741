package eino

import (
	"encoding/json"
	"path"
	"reflect"
	"unsafe"

	"github.com/cloudwego/eino/adk"
	"github.com/eino-contrib/jsonschema"

	"github.com/agentwork/agentwork/work"
)

var emptyTarget work.TargetInfo

// What the adapter reads of a built *adk.ChatModelAgent, whose
// configuration Eino keeps unexported: whether its Handlers include an
// agentwork Middleware (then it is an agent child, taking guidance), and
// its model (for gen_ai.provider.name), both through reflection, reading
// and never writing; a test pins them against
// Eino's layout, so an Eino release that moves them fails that test
// instead of making agent children function children.

// carriesMiddleware reports whether agent is a *adk.ChatModelAgent whose
// handlers include a *Middleware.
func carriesMiddleware(agent adk.Agent) bool {
	v, ok := chatModelAgent(agent)
	if !ok {
		return false
	}
	hs := v.FieldByName("handlers")
	if !hs.IsValid() || hs.Kind() != reflect.Slice {
		return false
	}
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
	if !ok {
		return ""
	}
	m := v.FieldByName("model")
	if !m.IsValid() || m.Kind() != reflect.Interface || m.IsNil() || !m.CanAddr() {
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
