package langchaingo_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentwork/agentwork/work"
)

// Example_readme runs the README's program (readme_test.go) as main does
// without OPENAI_API_KEY: on its offline model, one scripted model serving
// the coordinator and the researcher it starts in the background.
func Example_readme() {
	if err := run(context.Background(), offline()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Brief: Go 1.1 introduced per-P run queues with work stealing.
}

// TestReadmeBudgets runs the README's budget code: the child's budget and
// the pool reach the Supervisor.
func TestReadmeBudgets(t *testing.T) {
	sup := work.New()
	defer closeSup(t, sup)
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(offline(), nil))
	kit, err := readmeBudgets(context.Background(), sup, offline(), exec, []tools.Tool{tools.Calculator{}})
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
