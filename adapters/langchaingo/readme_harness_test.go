package langchaingo_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/work"
)

// Example_readme runs the README's "Use it" code (readme_test.go) on a
// scripted model: the coordinator starts the researcher in the background,
// reads its report with the work tool and answers.
func Example_readme() {
	ctx := context.Background()
	sup := work.New()
	defer sup.Close(ctx)

	workID := regexp.MustCompile(`"kind":"work\.ref","id":"([0-9a-f]{32})"`)
	coordinator := scripted.New(
		scripted.ToolCall("researcher", `{"input":"the Go scheduler's history","run_in_background":true}`),
		scripted.Func(func(req scripted.Request) scripted.Step {
			id := workID.FindStringSubmatch(req.Text())[1]
			return scripted.ToolCall("work", `{"action":"result","id":"`+id+`","timeout":"10s"}`)
		}),
		scripted.Func(func(req scripted.Request) scripted.Step {
			return scripted.Text("Brief: " + req.Messages[len(req.Messages)-2].Text())
		}),
	)
	researcher := scripted.New(scripted.Text("Go 1.1 introduced per-P run queues with work stealing."))
	llm := byInput{task: "scheduler evolve", coordinator: coordinator, child: researcher}

	answer, err := research(ctx, sup, llm, "How did Go's goroutine scheduler evolve?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(answer)
	// Output:
	// Brief: Go 1.1 introduced per-P run queues with work stealing.
}

// byInput sends the coordinator's requests (whose human input holds task)
// to one model and the child's to another.
type byInput struct {
	task               string
	coordinator, child llms.Model
}

func (b byInput) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok && m.Role == llms.ChatMessageTypeHuman && strings.Contains(t.Text, b.task) {
				return b.coordinator.GenerateContent(ctx, msgs, opts...)
			}
		}
	}
	return b.child.GenerateContent(ctx, msgs, opts...)
}

func (b byInput) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, b, prompt, opts...)
}

// TestReadmeUseIt: README.md's "Use it" code block is readme_test.go's
// code (as package main), so the README's snippet compiles and runs.
func TestReadmeUseIt(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "\n## Use it\n")
	if i < 0 {
		t.Fatal(`README.md has no "## Use it" section`)
	}
	section = section[i:]
	start := strings.Index(section, "```go\n")
	end := strings.Index(section[start+6:], "\n```\n")
	if start < 0 || end < 0 {
		t.Fatal(`README.md's "Use it" has no go code block`)
	}
	block := section[start+6 : start+6+end+1]
	code := string(src)
	code = code[strings.Index(code, "// README:begin\n")+len("// README:begin\n") : strings.Index(code, "\n// README:end")]
	if want := "package main\n\n" + code; block != want {
		t.Errorf("README.md's Use it block differs from readme_test.go; update the README with:\n%s", want)
	}
}
