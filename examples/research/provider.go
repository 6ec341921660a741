package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// Default models of the live providers.
const (
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultAnthropicModel = "claude-sonnet-4-5"
	defaultOllamaModel    = "llama3.1"
)

// providerFromEnv returns the live provider the environment selects (nil:
// the scripted model), in this order:
//
//   - OPENAI_API_KEY: langchaingo's OpenAI client; OPENAI_MODEL (default
//     gpt-4o-mini), OPENAI_BASE_URL (default OpenAI's);
//   - ANTHROPIC_API_KEY: the Anthropic client; ANTHROPIC_MODEL (default
//     claude-sonnet-4-5), ANTHROPIC_BASE_URL (default Anthropic's, with
//     /v1);
//   - OLLAMA_HOST: Ollama through its OpenAI-compatible endpoint
//     (OLLAMA_HOST + "/v1") with the OpenAI client, OLLAMA_MODEL (default
//     llama3.1): langchaingo's own llms/ollama client sends no tools.
//
// It reports the choice on stderr.
func providerFromEnv() llms.Model {
	m, desc, err := providerFrom(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "research: provider from environment:", err, "(using the scripted model)")
		return nil
	}
	if m != nil {
		fmt.Fprintln(os.Stderr, "research: live provider:", desc)
	}
	return m
}

func providerFrom(getenv func(string) string) (llms.Model, string, error) {
	or := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	switch {
	case getenv("OPENAI_API_KEY") != "":
		model := or("OPENAI_MODEL", defaultOpenAIModel)
		opts := []openai.Option{openai.WithToken(getenv("OPENAI_API_KEY")), openai.WithModel(model)}
		where := "api.openai.com"
		if base := getenv("OPENAI_BASE_URL"); base != "" {
			opts, where = append(opts, openai.WithBaseURL(base)), base
		}
		m, err := openai.New(opts...)
		return m, "openai " + model + " at " + where, err
	case getenv("ANTHROPIC_API_KEY") != "":
		model := or("ANTHROPIC_MODEL", defaultAnthropicModel)
		opts := []anthropic.Option{anthropic.WithToken(getenv("ANTHROPIC_API_KEY")), anthropic.WithModel(model)}
		where := "api.anthropic.com"
		if base := getenv("ANTHROPIC_BASE_URL"); base != "" {
			opts, where = append(opts, anthropic.WithBaseURL(base)), base
		}
		m, err := anthropic.New(opts...)
		return m, "anthropic " + model + " at " + where, err
	case getenv("OLLAMA_HOST") != "":
		base := ollamaOpenAIBase(getenv("OLLAMA_HOST"))
		model := or("OLLAMA_MODEL", defaultOllamaModel)
		m, err := openai.New(openai.WithBaseURL(base), openai.WithModel(model), openai.WithToken("ollama"))
		return m, "ollama " + model + " at " + base + " (OpenAI-compatible endpoint)", err
	}
	return nil, "", nil
}

// ollamaOpenAIBase turns OLLAMA_HOST ("host:port" or a URL) into the base
// URL of Ollama's OpenAI-compatible endpoint.
func ollamaOpenAIBase(host string) string {
	host = strings.TrimRight(strings.TrimSpace(host), "/")
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	if u, err := url.Parse(host); err == nil && u.Port() == "" && u.Hostname() != "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434") // Ollama's default port
		host = u.String()
	}
	return strings.TrimSuffix(host, "/v1") + "/v1"
}
