package langchaingo_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/adapters/langchaingo/providertest"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// Example_readme runs the README's program (readme_test.go) as it is,
// its openai client pointed at a fake OpenAI server (OPENAI_BASE_URL) that
// plays the coordinator and the researcher it starts in the background.
func Example_readme() {
	srv, err := providertest.StartOpenAI(readmeScript())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	for k, v := range map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test", "OPENAI_MODEL": "gpt-4o-mini"} {
		old, had := os.LookupEnv(k)
		_ = os.Setenv(k, v)
		defer func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		}()
	}
	main()
	if err := srv.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Brief: Go 1.1 introduced per-P run queues with work stealing. <nil>
}

// readmeScript is the fake OpenAI server's script for the README's
// program: the requests that declare the work tool are the coordinator's
// (start the researcher in the background, wait for its report, answer
// with it), the others the researcher's. tools/release's rehearsal
// (make release-check) runs the program on a copy of it.
func readmeScript() providertest.Script {
	ref := regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)
	coordinator := providertest.Sequence(
		providertest.Calls(providertest.Call("researcher", `{"input":"the Go scheduler's history","run_in_background":true}`)),
		providertest.ScriptFunc(func(req *providertest.Request) providertest.Reply {
			m := ref.FindStringSubmatch(req.Text())
			if m == nil {
				return providertest.Say("no work.ref")
			}
			return providertest.Calls(providertest.Call("work", `{"action":"result","id":"`+m[1]+`","timeout":"10s"}`))
		}),
		providertest.ScriptFunc(func(req *providertest.Request) providertest.Reply {
			report, _ := req.ToolResult(req.ToolCalls()[len(req.ToolCalls())-1].ID)
			return providertest.Say("Brief: " + report)
		}),
	)
	return providertest.Route(
		providertest.When(providertest.Declares("work"), coordinator),
		providertest.When(func(*providertest.Request) bool { return true }, providertest.Say("Go 1.1 introduced per-P run queues with work stealing.")),
	)
}

// TestReadmeBudgets runs the README's budget code: the child's budget and
// the pool reach the engine.
func TestReadmeBudgets(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	llm := scripted.New(scripted.Text("done"))
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, nil))
	kit, err := readmeBudgets(context.Background(), sup, llm, exec, []tools.Tool{tools.Calculator{}})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	if names := toolNames(kit.Tools()); strings.Join(names, ",") != "calculator,researcher,work" {
		t.Fatalf("tools = %v", names)
	}
}

func toolNames(ts []tools.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

// fragmentMark, on the line before a README go block, marks code this
// module cannot compile (another module's API); every other go block must
// be a region of readme_test.go.
const fragmentMark = "<!-- fragment: "

// TestReadme: every go code block of README.md is a region of
// readme_test.go ("// README:<name>" to "// README:end"), so the README's
// code compiles (and Example_readme runs its program): the program region
// as package main, the others as they are indented in their function.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	regions := readmeRegions(t, string(src))
	if _, ok := regions["program"]; !ok {
		t.Fatal("readme_test.go has no README:program region")
	}
	regions["program"] = "package main\n\n" + regions["program"]
	if n := strings.Count(regions["program"], "\n"); n > 25 {
		t.Errorf("the README's program is %d lines; the front page promises at most 25, imports included", n)
	}
	if err := goGetFirst(string(readme)); err != nil {
		t.Error(err)
	}
	blocks := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatal("README.md has no go code block")
	}
	used := map[string]bool{}
	for _, b := range blocks {
		if b.fragment {
			continue
		}
		found := false
		for name, code := range regions {
			if code == b.code {
				used[name], found = true, true
			}
		}
		if !found {
			t.Errorf("README.md line %d: this go block is no region of readme_test.go (update one of them):\n%s", b.line, b.code)
		}
	}
	for name, code := range regions {
		if !used[name] {
			t.Errorf("readme_test.go's README:%s region is in no README.md go block; the README should have:\n%s", name, code)
		}
	}
}

// goGetLine is the README's install line; it comes before any table and
// any code block but its own.
const goGetLine = "go get github.com/agentwork/agentwork@latest"

func goGetFirst(readme string) error {
	i := strings.Index(readme, goGetLine)
	if i < 0 {
		return fmt.Errorf("README.md has no %q line", goGetLine)
	}
	for _, marker := range []string{"\n|", "```go"} {
		if j := strings.Index(readme, marker); j >= 0 && j < i {
			return fmt.Errorf("README.md: %q comes after a table or a Go block (%q at byte %d)", goGetLine, strings.TrimSpace(marker), j)
		}
	}
	return nil
}

type goBlock struct {
	line     int
	code     string
	fragment bool
}

// goBlocks returns README's ```go blocks, each ending with a newline.
func goBlocks(readme string) []goBlock {
	lines := strings.Split(readme, "\n")
	var out []goBlock
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```go" {
			continue
		}
		b := goBlock{line: i + 1, fragment: i > 0 && strings.HasPrefix(lines[i-1], fragmentMark)}
		var code strings.Builder
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			code.WriteString(lines[i] + "\n")
		}
		b.code = code.String()
		out = append(out, b)
	}
	return out
}

// readmeRegions returns src's regions by name, dedented by their marker's
// indentation.
func readmeRegions(t *testing.T, src string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var name, indent string
	var code strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimLeft(line, "\t")
		switch {
		case name == "" && strings.HasPrefix(trimmed, "// README:") && trimmed != "// README:end":
			name, indent = strings.TrimPrefix(trimmed, "// README:"), line[:len(line)-len(trimmed)]
			code.Reset()
		case name != "" && trimmed == "// README:end":
			out[name] = strings.TrimSuffix(code.String(), "\n\n") // a blank line before the end marker
			if !strings.HasSuffix(out[name], "\n") {
				out[name] += "\n"
			}
			name = ""
		case name != "":
			if line != "" && !strings.HasPrefix(line, indent) {
				t.Fatalf("readme_test.go: README:%s: line %q is less indented than its marker", name, line)
			}
			code.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
	}
	if name != "" {
		t.Fatalf("readme_test.go: README:%s has no README:end", name)
	}
	return out
}
