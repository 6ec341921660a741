package scripted

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Request is the record of one GenerateContent call the model answered (or
// failed with [ErrExhausted]). It is a deep copy: it shares no memory with
// the caller's messages and options, with the model, or with any other
// Request value handed out.
type Request struct {
	// Index is the 0-based position of the request in the model's lifetime;
	// it is answered by the step at the same position.
	Index int
	// Messages are the messages the caller sent, in order.
	Messages []Message
	// Tools are the definitions passed with llms.WithTools, in order.
	Tools []ToolDef
	// Functions are the definitions passed with llms.WithFunctions, in
	// order (OpenAIFunctionsAgent passes its tools this way).
	Functions []ToolDef
	// Options are the other call options.
	Options CallOptions
}

// Message is one message of a [Request].
type Message struct {
	// Role is the message's role: "system", "human", "ai", "tool", ...
	Role llms.ChatMessageType
	// Parts are the message's parts, in order.
	Parts []Part
}

// PartKind says which llms.ContentPart a [Part] was.
type PartKind string

// The part kinds.
const (
	PartText         PartKind = "text"          // llms.TextContent: Text
	PartToolCall     PartKind = "tool_call"     // llms.ToolCall: ToolCallID, Name, Arguments
	PartToolResponse PartKind = "tool_response" // llms.ToolCallResponse: ToolCallID, Name, Text (its Content)
	PartImageURL     PartKind = "image_url"     // llms.ImageURLContent: Text (the URL)
	PartBinary       PartKind = "binary"        // llms.BinaryContent: MIMEType (the data is not kept)
	PartOther        PartKind = "other"         // anything else: Text is its Go type
)

// Part is one part of a [Message], flattened; the fields that apply depend on
// Kind.
type Part struct {
	Kind       PartKind
	Text       string
	ToolCallID string
	Name       string
	Arguments  string
	MIMEType   string
	// Cached is true when the part was wrapped in llms.CachedContent (marked
	// for prompt caching); the fields above describe the wrapped part.
	Cached bool
}

// ToolDef is a tool or function definition offered to the model.
type ToolDef struct {
	// Type is the llms.Tool type ("function"); empty for Functions.
	Type        string
	Name        string
	Description string
	// Parameters is the JSON encoding of the parameter schema; nil when
	// there is none.
	Parameters json.RawMessage
	Strict     bool
}

// CallOptions are the recorded call options other than tools and functions
// (see [Request.Tools] and [Request.Functions]).
type CallOptions struct {
	Model            string
	CandidateCount   int
	MaxTokens        int
	Temperature      float64
	StopWords        []string
	TopK             int
	TopP             float64
	Seed             int
	MinLength        int
	MaxLength        int
	N                int
	JSONMode         bool
	ResponseMIMEType string
	// Streaming is true when a streaming function was set.
	Streaming bool
	// ToolChoice and FunctionCallBehavior are as set by the caller; a
	// ToolChoice other than a string is recorded as its JSON decoding
	// (e.g. map[string]any), so nothing is shared with the caller.
	ToolChoice           any
	FunctionCallBehavior llms.FunctionCallBehavior
	// Metadata is a copy of the metadata map: string, bool, int and float64
	// values as they are, any other value as its JSON decoding (e.g.
	// map[string]any), so nothing is shared with the caller.
	Metadata map[string]any
}

// Text returns the text the message carries: its text parts and the content
// of its tool-response parts, concatenated in order.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == PartText || p.Kind == PartToolResponse {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Text returns the text of every message (see [Message.Text]), joined by
// newlines: handy for "did the model see X" checks.
func (r Request) Text() string {
	texts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		texts[i] = m.Text()
	}
	return strings.Join(texts, "\n")
}

// LastMessage returns the request's last message, or the zero Message when
// it has none.
func (r Request) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolNames returns the names of the offered tools, then of the offered
// functions, in order.
func (r Request) ToolNames() []string {
	names := make([]string, 0, len(r.Tools)+len(r.Functions))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	for _, f := range r.Functions {
		names = append(names, f.Name)
	}
	return names
}

// clone returns a deep copy of r.
func (r Request) clone() Request {
	c := r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		c.Messages[i] = Message{Role: m.Role, Parts: slices.Clone(m.Parts)}
	}
	c.Tools = cloneDefs(r.Tools)
	c.Functions = cloneDefs(r.Functions)
	c.Options.StopWords = slices.Clone(r.Options.StopWords)
	c.Options.ToolChoice = cloneJSONValue(r.Options.ToolChoice)
	if r.Options.Metadata != nil {
		c.Options.Metadata = make(map[string]any, len(r.Options.Metadata))
		for k, v := range r.Options.Metadata {
			c.Options.Metadata[k] = cloneJSONValue(v)
		}
	}
	return c
}

func cloneDefs(defs []ToolDef) []ToolDef {
	if defs == nil {
		return nil
	}
	c := make([]ToolDef, len(defs))
	for i, d := range defs {
		d.Parameters = slices.Clone(d.Parameters)
		c[i] = d
	}
	return c
}

// cloneJSONValue deep-copies a value that came out of json.Unmarshal into an
// any (or is a string or nil).
func cloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = cloneJSONValue(e)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = cloneJSONValue(e)
		}
		return c
	default:
		return v
	}
}

// record builds the Request for a call. It fails only when a tool or
// function's parameter schema cannot be encoded as JSON, which a real
// provider could not send either.
func record(index int, messages []llms.MessageContent, opts llms.CallOptions) (Request, error) {
	r := Request{Index: index, Messages: make([]Message, len(messages))}
	for i, mc := range messages {
		m := Message{Role: mc.Role, Parts: make([]Part, 0, len(mc.Parts))}
		for _, p := range mc.Parts {
			m.Parts = append(m.Parts, recordPart(p))
		}
		r.Messages[i] = m
	}
	for _, f := range opts.Functions {
		d, err := recordDef(f)
		if err != nil {
			return Request{}, err
		}
		r.Functions = append(r.Functions, d)
	}
	for _, t := range opts.Tools {
		d := ToolDef{Type: t.Type}
		if t.Function != nil {
			if k := indexOf(opts.Functions, t.Function); k >= 0 {
				// The same definition as a function (a caller that passes
				// both): its encoding is reused, the record is the same.
				d = r.Functions[k]
			} else {
				var err error
				if d, err = recordDef(*t.Function); err != nil {
					return Request{}, err
				}
			}
			d.Type = t.Type
		}
		r.Tools = append(r.Tools, d)
	}
	r.Options = CallOptions{
		Model:                opts.Model,
		CandidateCount:       opts.CandidateCount,
		MaxTokens:            opts.MaxTokens,
		Temperature:          opts.Temperature,
		StopWords:            slices.Clone(opts.StopWords),
		TopK:                 opts.TopK,
		TopP:                 opts.TopP,
		Seed:                 opts.Seed,
		MinLength:            opts.MinLength,
		MaxLength:            opts.MaxLength,
		N:                    opts.N,
		JSONMode:             opts.JSONMode,
		ResponseMIMEType:     opts.ResponseMIMEType,
		Streaming:            opts.StreamingFunc != nil,
		ToolChoice:           jsonCopy(opts.ToolChoice),
		FunctionCallBehavior: opts.FunctionCallBehavior,
	}
	if opts.Metadata != nil {
		r.Options.Metadata = make(map[string]any, len(opts.Metadata))
		for k, v := range opts.Metadata {
			r.Options.Metadata[k] = jsonCopy(v)
		}
	}
	return r, nil
}

// indexOf returns the index of the element of fns that f points to, or -1.
func indexOf(fns []llms.FunctionDefinition, f *llms.FunctionDefinition) int {
	for k := range fns {
		if &fns[k] == f {
			return k
		}
	}
	return -1
}

func recordPart(p llms.ContentPart) Part {
	switch p := p.(type) {
	case llms.TextContent:
		return Part{Kind: PartText, Text: p.Text}
	case llms.ToolCall:
		part := Part{Kind: PartToolCall, ToolCallID: p.ID}
		if p.FunctionCall != nil {
			part.Name, part.Arguments = p.FunctionCall.Name, p.FunctionCall.Arguments
		}
		return part
	case llms.ToolCallResponse:
		return Part{Kind: PartToolResponse, ToolCallID: p.ToolCallID, Name: p.Name, Text: p.Content}
	case llms.ImageURLContent:
		return Part{Kind: PartImageURL, Text: p.URL}
	case llms.BinaryContent:
		return Part{Kind: PartBinary, MIMEType: p.MIMEType}
	case llms.CachedContent:
		part := recordPart(p.ContentPart)
		part.Cached = true
		return part
	default:
		return Part{Kind: PartOther, Text: fmt.Sprintf("%T", p)}
	}
}

func recordDef(f llms.FunctionDefinition) (ToolDef, error) {
	d := ToolDef{Name: f.Name, Description: f.Description, Strict: f.Strict}
	if f.Parameters != nil {
		b, err := json.Marshal(f.Parameters)
		if err != nil {
			return ToolDef{}, fmt.Errorf("parameters of %q are not JSON: %w", f.Name, err)
		}
		d.Parameters = b
	}
	return d, nil
}

// jsonCopy returns a deep copy of v: strings and nil as they are, anything
// else as its JSON decoding, or its %v form if it has none.
func jsonCopy(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, int:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	var c any
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return c
}
