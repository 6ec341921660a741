package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	pt "github.com/agentwork/agentwork/adapters/langchaingo/providertest"
)

// TestProviderFrom: the environment selects the provider, its model and
// its base URL; Ollama goes through its OpenAI-compatible endpoint.
func TestProviderFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"none", nil, ""},
		{"openai defaults", map[string]string{"OPENAI_API_KEY": "k"}, "openai gpt-4o-mini at api.openai.com"},
		{"openai settings", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_MODEL": "gpt-4.1", "OPENAI_BASE_URL": "http://h/v1"}, "openai gpt-4.1 at http://h/v1"},
		{"anthropic defaults", map[string]string{"ANTHROPIC_API_KEY": "k"}, "anthropic claude-sonnet-4-5 at api.anthropic.com"},
		{"anthropic settings", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "claude-opus-4-1", "ANTHROPIC_BASE_URL": "http://h/v1"}, "anthropic claude-opus-4-1 at http://h/v1"},
		{"ollama host:port", map[string]string{"OLLAMA_HOST": "127.0.0.1:11434"}, "ollama llama3.1 at http://127.0.0.1:11434/v1 (OpenAI-compatible endpoint)"},
		{"ollama bare host", map[string]string{"OLLAMA_HOST": "gpu-box", "OLLAMA_MODEL": "qwen3"}, "ollama qwen3 at http://gpu-box:11434/v1 (OpenAI-compatible endpoint)"},
		{"ollama URL", map[string]string{"OLLAMA_HOST": "https://o.example:8443/"}, "ollama llama3.1 at https://o.example:8443/v1 (OpenAI-compatible endpoint)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, desc, err := providerFrom(func(k string) string { return tc.env[k] })
			if err != nil || desc != tc.want || (m == nil) != (tc.want == "") {
				t.Errorf("providerFrom = %v, %q, %v; want %q", m, desc, err, tc.want)
			}
		})
	}
}

// buildDemo builds the demo binary into a test directory (with the race
// detector when the test has it).
func buildDemo(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the demo binary")
	}
	bin := filepath.Join(t.TempDir(), "research")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command(goTool, append(args, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("building the demo: %v\n%s", err, out)
	}
	return bin
}

const (
	demoWebTask = "DEMO-WEB-TASK: the history of Go's scheduler"
	demoReport  = "DEMO-REPORT: per-P run queues and work stealing since Go 1.1."
	demoAnswer  = "DEMO-ANSWER: brief written from the background research."
)

// TestDemoBinaryOnFakeProviders runs the demo binary against each fake
// provider, selected by the environment exactly as a user would, and
// checks that background work really happened: launches answered with
// work.refs, a result read back with the work tool (the child's exact
// report), and the telemetry summary of that work.
func TestDemoBinaryOnFakeProviders(t *testing.T) {
	bin := buildDemo(t)
	for _, tc := range []struct {
		name  string
		start func(t *testing.T, s pt.Script) (*pt.Server, []string)
		api   string
		model string
	}{
		{"openai", func(t *testing.T, s pt.Script) (*pt.Server, []string) {
			srv := pt.NewOpenAI(t, s)
			return srv, []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_MODEL=gpt-test"}
		}, "openai", "gpt-test"},
		{"anthropic", func(t *testing.T, s pt.Script) (*pt.Server, []string) {
			srv := pt.NewAnthropic(t, s)
			return srv, []string{"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.BaseURL()}
		}, "anthropic", defaultAnthropicModel},
		{"ollama", func(t *testing.T, s pt.Script) (*pt.Server, []string) {
			srv := pt.NewOllama(t, s)
			return srv, []string{"OLLAMA_HOST=" + srv.URL(), "OLLAMA_MODEL=qwen-test"}
		}, "openai", "qwen-test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coord := pt.Sequence(
				pt.SayThenCall("Starting the research in the background.",
					pt.Call("research_web", pt.Args(map[string]any{"input": demoWebTask, "run_in_background": true})),
					pt.Call("fetch_dataset", pt.Args(map[string]any{"input": "scheduler-benchmarks", "run_in_background": true})),
					pt.Call("word_count", pt.Args(map[string]any{"__arg1": "three short words"})),
				),
				pt.ScriptFunc(func(req *pt.Request) pt.Reply {
					ids := demoRefs(req.Text())
					return pt.Calls(
						pt.Call("work", pt.Args(map[string]any{"action": "result", "id": ids["research_web"], "timeout": "10s"})),
						pt.Call("work", pt.Args(map[string]any{"action": "result", "id": ids["fetch_dataset"], "timeout": "10s"})),
					)
				}),
				pt.Say(demoAnswer),
			)
			child := pt.Sequence(
				pt.Calls(pt.Call("search", pt.Args(map[string]any{"__arg1": "go scheduler history"}))),
				pt.Say(demoReport),
			)
			srv, env := tc.start(t, pt.Route(
				pt.When(pt.FirstUserContains(task), coord),
				pt.When(pt.FirstUserContains(demoWebTask), child),
			))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin)
			cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("demo: %v\n--- stdout ---\n%s\n--- stderr ---\n%s", err, stdout.String(), stderr.String())
			}
			out := stdout.String()
			fail := func(format string, args ...any) {
				t.Helper()
				t.Errorf(format+"\n--- stdout ---\n%s\n--- stderr ---\n%s", append(args, out, stderr.String())...)
			}
			if !strings.Contains(out, "agentwork research demo (live provider)") {
				fail("the demo did not run on the live provider")
			}
			if !strings.Contains(stderr.String(), "research: live provider: ") || !strings.Contains(stderr.String(), tc.model) {
				fail("stderr does not name the provider and model %s", tc.model)
			}
			ids := map[string]string{}
			for _, m := range regexp.MustCompile(`(?m)^   (research_web|fetch_dataset)\(\{.*"run_in_background":true\}\) -> \{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([a-z_]+)"`).FindAllStringSubmatch(out, -1) {
				if m[1] == m[3] {
					ids[m[1]] = m[2]
				}
			}
			if len(ids) != 2 {
				fail("found launches %v, want research_web and fetch_dataset", ids)
				return
			}
			if !strings.Contains(out, `   work({"action":"result","id":"`+ids["research_web"]+`","timeout":"10s"}) -> `+demoReport+"\n") {
				fail("the coordinator did not read research_web's exact report with the work tool")
			}
			if !regexp.MustCompile(`work\(\{"action":"result","id":"` + ids["fetch_dataset"] + `","timeout":"10s"\}\) -> \{"work":.*"state":"failed"`).MatchString(out) {
				fail("fetch_dataset's failure is not visible as its state")
			}
			if !strings.Contains(out, "\n== answer ==\n"+demoAnswer+"\n") {
				fail("the answer is missing")
			}
			for _, want := range []string{"== telemetry: spans ==", "invoke_agent research_web", "== telemetry: metrics ==",
				"{state=completed,target=research_web} 1", "{state=failed,target=fetch_dataset} 1", "{action=result,outcome=ok} 2"} {
				if !strings.Contains(out, want) {
					fail("the telemetry summary lacks %q", want)
				}
			}
			// On the wire: every request went to the selected API and model;
			// the research child got the guidance-free, own-tools request,
			// plus emit_update (it declares updates), then (its budget
			// being one turn) its final request, without tools.
			reqs := srv.Requests()
			webTurn := 0
			if len(reqs) != 5 {
				fail("the fake provider got %d requests, want 5 (3 coordinator, 2 research_web)", len(reqs))
			}
			for _, r := range reqs {
				if r.API != tc.api || r.Model != tc.model {
					fail("request %d: API %s model %q, want %s %q", r.N, r.API, r.Model, tc.api, tc.model)
				}
				if !pt.FirstUserContains(demoWebTask)(r) {
					continue
				}
				webTurn++
				want := "search,emit_update"
				if webTurn == 2 && r.API != "anthropic" {
					// Anthropic's history of tool calls needs the
					// definitions: the final request keeps them.
					want = ""
				}
				if strings.Join(r.ToolNames(), ",") != want {
					fail("research_web's request %d declares %v, want [%s]", r.N, r.ToolNames(), want)
				}
			}
		})
	}
}

var demoRefRE = regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([a-z_]+)"`)

func demoRefs(text string) map[string]string {
	out := map[string]string{}
	for _, m := range demoRefRE.FindAllStringSubmatch(text, -1) {
		out[m[2]] = m[1]
	}
	return out
}
