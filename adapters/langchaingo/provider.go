package langchaingo

import (
	"path"
	"reflect"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// providerNames maps langchaingo's llms client packages to the OTel GenAI
// gen_ai.provider.name values (semantic conventions v1.41.0).
var providerNames = map[string]string{
	"openai":    "openai",
	"anthropic": "anthropic",
	"ollama":    "ollama",
	"googleai":  "gcp.gemini",
	"vertex":    "gcp.vertex_ai",
	"bedrock":   "aws.bedrock",
	"mistral":   "mistral_ai",
	"cohere":    "cohere",
	"groq":      "groq",
}

// ProviderName returns the GenAI provider name of a model client, for the
// gen_ai.provider.name attribute: the model's own ProviderName method when
// it has one (a wrapper can forward its inner model's), else the name for
// langchaingo's client package (llms/openai: "openai", llms/anthropic:
// "anthropic", llms/ollama: "ollama", llms/googleai: "gcp.gemini", ...),
// else "". A Model from WrapModel reports its inner model's.
func ProviderName(m llms.Model) string {
	switch v := m.(type) {
	case nil:
		return ""
	case *Model:
		if v == nil {
			return ""
		}
		return ProviderName(v.inner)
	case interface{ ProviderName() string }:
		return v.ProviderName()
	}
	t := reflect.TypeOf(m)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return providerNames[path.Base(t.PkgPath())]
}

// providerOption is WithProvider: it sets the Child, not the
// middleware.Child.
type providerOption string

func (providerOption) apply(*middleware.Child) {}

// WithProvider names the child agent's model provider for telemetry
// (gen_ai.provider.name on its invoke_agent span), where FromExecutor
// cannot find it in the executor (NewAgent builds its executor per run);
// an agent child with neither carries telemetry.ProviderUnknown
// ("_OTHER").
func WithProvider(name string) ChildOption { return providerOption(name) }

// providerFrom returns the last WithProvider among opts, or "".
func providerFrom(opts []ChildOption) string {
	p := ""
	for _, o := range opts {
		if v, ok := o.(providerOption); ok {
			p = string(v)
		}
	}
	return p
}

// agentModel returns the model of one of the agents FromExecutor knows.
func agentModel(a agents.Agent) llms.Model {
	switch ag := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		return ag.LLM
	case *agents.OneShotZeroAgent:
		return chainModel(ag.Chain)
	case *agents.ConversationalAgent:
		return chainModel(ag.Chain)
	}
	return nil
}

func chainModel(c chains.Chain) llms.Model {
	if lc, ok := c.(*chains.LLMChain); ok {
		return lc.LLM
	}
	return nil
}

// targetInfo is what the Observer learns about a child tool at each call.
func targetInfo(label string, c middleware.Child, provider string) observe.TargetInfo {
	id := c.ID
	if id == "" {
		id = label
	}
	info := observe.TargetInfo{Description: c.Description}
	if c.Kind == work.KindAgent {
		info.AgentID, info.Provider = id, provider
	}
	return info
}
