package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/middleware"
)

// transcript prints each model turn and each tool call with its reply. It is
// safe for concurrent use (children print from their own goroutines).
type transcript struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *transcript) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, format, args...)
}

func indent(who string) string {
	if who == "coordinator" {
		return ""
	}
	return "    "
}

// model wraps m so that every request's appended context (status block,
// guidance) and every reply is printed.
func (t *transcript) model(who string, m llms.Model) llms.Model {
	return &printingModel{t: t, who: who, inner: m}
}

type printingModel struct {
	t      *transcript
	who    string
	inner  llms.Model
	mu     sync.Mutex
	turn   int
	notice string // the last completion notice shown
	block  string // the last updates block shown
}

// Unwrap returns the wrapped model, so that the adapter recognises
// langchaingo's OpenAI client under the transcript (it then declares each
// tool once, not as a function and a tool both).
func (p *printingModel) Unwrap() llms.Model { return p.inner }

func (p *printingModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, p, prompt, opts...)
}

func (p *printingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	p.mu.Lock()
	p.turn++
	turn := p.turn
	notice := ""
	for _, m := range msgs { // a resumed run's notice, shown once (a memoryless coordinator's input is its task, a blank line, then the notice)
		text := partsText(m)
		if i := strings.Index(text, lc.NoticeHeader); i >= 0 && text[i:] != p.notice {
			notice, p.notice = text[i:], text[i:]
		}
		// The children's updates ride with the resume, as a message of
		// their own (ReportUpdates), shown once.
		if strings.HasPrefix(text, middleware.UpdatesHeader) && text != p.block {
			p.block = text
			notice += "\n" + text
		}
	}
	p.mu.Unlock()
	var b strings.Builder
	in := indent(p.who)
	fmt.Fprintf(&b, "%s-- %s: model turn %d --\n", in, p.who, turn)
	for _, line := range strings.Split(notice, "\n") {
		if line != "" {
			fmt.Fprintf(&b, "%s   > %s\n", in, line)
		}
	}
	// The context the adapter appended (status block, guidance, the
	// budget's final instruction) is the last few messages.
	first := len(msgs)
	for first > 0 && appended(partsText(msgs[first-1])) {
		first--
	}
	for _, m := range msgs[first:] {
		for _, line := range strings.Split(partsText(m), "\n") {
			fmt.Fprintf(&b, "%s   | %s\n", in, line)
		}
	}
	resp, err := p.inner.GenerateContent(ctx, msgs, opts...)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "%s   model stopped: %v\n", in, err)
	case len(resp.Choices) > 0:
		c := resp.Choices[0]
		for _, tc := range c.ToolCalls {
			if tc.FunctionCall != nil {
				fmt.Fprintf(&b, "%s   calls %s %s\n", in, tc.FunctionCall.Name, tc.FunctionCall.Arguments)
			}
		}
		if len(c.ToolCalls) == 0 {
			fmt.Fprintf(&b, "%s   says: %s\n", in, oneLine(c.Content))
		}
	}
	p.t.printf("%s", b.String())
	return resp, err
}

func appended(text string) bool {
	return strings.HasPrefix(text, "[background work]") || strings.HasPrefix(text, "[supervisor guidance]") || strings.HasPrefix(text, "[budget]")
}

func partsText(m llms.MessageContent) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tools wraps each tool so that its calls and replies are printed.
func (t *transcript) tools(who string, ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, x := range ts {
		out[i] = t.tool(who, x)
	}
	return out
}

func (t *transcript) tool(who string, x tools.Tool) tools.Tool {
	return printingTool{Tool: x, t: t, who: who}
}

type printingTool struct {
	tools.Tool
	t   *transcript
	who string
}

func (p printingTool) Call(ctx context.Context, input string) (string, error) {
	out, err := p.Tool.Call(ctx, input)
	in := indent(p.who)
	if err != nil {
		p.t.printf("%s   %s(%s) -> error: %v\n", in, p.Name(), oneLine(input), err)
	} else {
		p.t.printf("%s   %s(%s) -> %s\n", in, p.Name(), oneLine(input), oneLine(out))
	}
	return out, err
}
