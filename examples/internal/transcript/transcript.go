// Package transcript prints what a scripted example's coordinator does:
// each model turn (with the status block the model was sent) and each tool
// call with its reply. The examples share it.
package transcript

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// Transcript writes to W. Its model wrapper counts turns: one agent's
// turns never overlap.
type Transcript struct {
	W    io.Writer
	turn int
}

// Model returns m wrapped so that each turn is printed.
func (t *Transcript) Model(m llms.Model) llms.Model { return &printingModel{t: t, inner: m} }

type printingModel struct {
	t     *Transcript
	inner llms.Model
}

func (p *printingModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, p, prompt, opts...)
}

// GenerateContent runs on the agent's goroutine only: turns never overlap.
func (p *printingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	p.t.turn++
	fmt.Fprintf(p.t.W, "-- model turn %d --\n", p.t.turn)
	if n := len(msgs); n > 1 {
		for _, part := range msgs[n-1].Parts {
			if text, ok := part.(llms.TextContent); ok && strings.HasPrefix(text.Text, "[background work]") {
				for _, line := range strings.Split(text.Text, "\n") {
					fmt.Fprintf(p.t.W, "   | %s\n", line)
				}
			}
		}
	}
	resp, err := p.inner.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		fmt.Fprintf(p.t.W, "   model error: %v\n", err)
		return resp, err
	}
	for _, line := range strings.Split(resp.Choices[0].Content, "\n") {
		fmt.Fprintf(p.t.W, "   says: %s\n", line)
	}
	return resp, nil
}

// Tools returns ts wrapped so that each call is printed with its reply.
func (t *Transcript) Tools(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, x := range ts {
		out[i] = printingTool{Tool: x, w: t.W}
	}
	return out
}

type printingTool struct {
	tools.Tool
	w io.Writer
}

func (p printingTool) Call(ctx context.Context, input string) (string, error) {
	out, err := p.Tool.Call(ctx, input)
	fmt.Fprintf(p.w, "   %s -> %s\n", p.Name(), out)
	return out, err
}
