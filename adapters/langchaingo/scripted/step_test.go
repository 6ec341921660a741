package scripted_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
)

// TestTextHelpers checks each text helper's exact reply, and that a call or
// answer the agent would read back differently fails its request.
func TestTextHelpers(t *testing.T) {
	tests := []struct {
		name    string
		step    scripted.Step
		want    string // the reply text, when valid
		wantErr string // substring of the request's error, when invalid
	}{
		{name: "ReActCall", step: scripted.ReActCall("search", "go lang"), want: "Action: search\nAction Input: go lang"},
		{name: "ReActCall multi-line input", step: scripted.ReActCall("sql", "SELECT 1\nFROM t"), want: "Action: sql\nAction Input: SELECT 1\nFROM t"},
		{name: "ReActCall JSON input", step: scripted.ReActCall("work", `{"action":"list"}`), want: "Action: work\nAction Input: {\"action\":\"list\"}"},
		{name: "ReActCall padded input", step: scripted.ReActCall("search", " go "), wantErr: `would not read the reply "Action: search\nAction Input:  go " as a call to "search" with input " go ": it reads a call to "search" with input "go"`},
		{name: "ReActCall tool with newline", step: scripted.ReActCall("a\nb", "x"), wantErr: "OneShotZeroAgent would not read"},
		{name: "ReActCall input with a final-answer phrase", step: scripted.ReActCall("search", "the answer is: 42"), wantErr: `it reads the final answer "42"`},
		{name: "ReActCall input ending in Observation", step: scripted.ReActCall("search", "x\nObservation:"), wantErr: "OneShotZeroAgent would not read"},
		{name: "ReActFinal", step: scripted.ReActFinal("42"), want: "Final Answer: 42"},
		{name: "ReActFinal multi-line", step: scripted.ReActFinal("line 1\nline 2"), want: "Final Answer: line 1\nline 2"},
		{name: "ReActFinal padded", step: scripted.ReActFinal("42 "), wantErr: `it reads the final answer "42"`},
		{name: "ReActFinal empty", step: scripted.ReActFinal(""), want: "Final Answer: "},
		{name: "ReActFinal nested marker", step: scripted.ReActFinal("a Final Answer: b"), wantErr: `it reads the final answer "b"`},
		{name: "ConversationalCall", step: scripted.ConversationalCall("search", "go"), want: "Do I need to use a tool? Yes\nAction: search\nAction Input: go"},
		{name: "ConversationalCall input with AI:", step: scripted.ConversationalCall("search", "AI: news"), wantErr: `ConversationalAgent would not read the reply "Do I need to use a tool? Yes\nAction: search\nAction Input: AI: news" as a call to "search" with input "AI: news": it reads the final answer " news"`},
		{name: "ConversationalFinal", step: scripted.ConversationalFinal("Hi there."), want: "Do I need to use a tool? No\nAI:Hi there."},
		{name: "ConversationalFinal keeps leading space", step: scripted.ConversationalFinal("  lead"), want: "Do I need to use a tool? No\nAI:  lead"},
		{name: "ConversationalFinal trailing space", step: scripted.ConversationalFinal("trail "), wantErr: `it reads the final answer "trail"`},
		{name: "ConversationalFinal with AI:", step: scripted.ConversationalFinal("AI: twice"), wantErr: `it reads the final answer " twice"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scripted.New(tt.step).Call(context.Background(), "prompt")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("reply = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
