package eino

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// WrapModel wraps the agent's model for each request: a coordinator's
// request gets the owner's status block as its last user message (not
// saved into the conversation); a child's final request (its budget ran
// out) goes without tools and with middleware's final instruction; a
// child's response has its token usage recorded and its tool calls cut
// to the child's allowance. A request of neither is passed through.
func (m *Middleware) WrapModel(ctx context.Context, inner model.BaseChatModel, _ *adk.ModelContext) (model.BaseChatModel, error) {
	if ctx == nil {
		return inner, nil
	}
	b := boundaryFrom(ctx)
	p := preparedFrom(ctx)
	if !b.InChild() && p == nil {
		return inner, nil
	}
	return &boundaryModel{inner: inner}, nil
}

// boundaryModel is WrapModel's model for one request.
type boundaryModel struct{ inner model.BaseChatModel }

// before returns the request as sent: the extra user messages appended
// (a copy: the conversation is not changed) and, for a final request, no
// tools.
func before(ctx context.Context, input []*schema.Message, opts []model.Option) ([]*schema.Message, []model.Option) {
	b := boundaryFrom(ctx)
	var extra []*schema.Message
	if b.Final() {
		extra = append(extra, schema.UserMessage(b.FinalInstruction()))
		opts = append(opts[:len(opts):len(opts)], model.WithTools([]*schema.ToolInfo{}))
	}
	if p := preparedFrom(ctx); p != nil {
		if block := p.block.StatusBlock(ctx); block != "" {
			extra = append(extra, schema.UserMessage(block))
		}
	}
	if len(extra) > 0 {
		input = append(input[:len(input):len(input)], extra...)
	}
	return input, opts
}

// after closes a child's boundary with the response.
func after(ctx context.Context, msg *schema.Message) *schema.Message {
	b := boundaryFrom(ctx)
	if !b.InChild() {
		return msg
	}
	in, out, ok := ResponseUsage(msg)
	left := b.End(in, out, ok)
	if msg == nil {
		return nil
	}
	if b.Final() {
		captureFinal(ctx, msg.Content)
	}
	if left < 0 || len(msg.ToolCalls) <= left {
		return msg
	}
	cp := *msg
	cp.ToolCalls = msg.ToolCalls[:left:left]
	return &cp
}

func (w *boundaryModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	input, opts = before(ctx, input, opts)
	msg, err := w.inner.Generate(ctx, input, opts...)
	if err != nil {
		return msg, err
	}
	return after(ctx, msg), nil
}

// Stream streams a coordinator's response as the model streams it; a
// child's is read whole first (its usage and tool calls are known only
// at its end) and given as a stream of one message.
func (w *boundaryModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	input, opts = before(ctx, input, opts)
	sr, err := w.inner.Stream(ctx, input, opts...)
	if err != nil || !boundaryFrom(ctx).InChild() {
		return sr, err
	}
	msg, err := schema.ConcatMessageStream(sr)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{after(ctx, msg)}), nil
}

// ResponseUsage returns the input and output tokens a provider reported
// for msg (schema.ResponseMeta.Usage), and whether it reported any: a
// response without usage, or with zero tokens, is unknown, and a child's
// budget counts it conservatively.
func ResponseUsage(msg *schema.Message) (input, output int64, ok bool) {
	if msg == nil || msg.ResponseMeta == nil || msg.ResponseMeta.Usage == nil {
		return 0, 0, false
	}
	u := msg.ResponseMeta.Usage
	in, out := int64(max(u.PromptTokens, 0)), int64(max(u.CompletionTokens, 0))
	if in+out == 0 {
		return 0, 0, false
	}
	return in, out, true
}
