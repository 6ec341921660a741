package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

type callerKey struct{}

// foreground does what the middleware does for a foreground child call.
func (h *harness) foreground(ctx context.Context, t work.Target, run work.RunFunc) (string, error) {
	ctx, end := h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallForeground, Tool: t.Label, CallID: "call_fg", Owner: h.owner.ID()})
	out, err := h.s.Call(ctx, work.Spec{Owner: h.owner, Target: t, Run: run})
	var we *work.Error
	switch {
	case err == nil:
		end(observe.ToolCallEnd{Outcome: "ok"})
	case errors.As(err, &we) && we.Class != "":
		end(observe.ToolCallEnd{Outcome: "failed", ErrorClass: we.Class})
	case errors.As(err, &we):
		end(observe.ToolCallEnd{Outcome: "failed", ErrorClass: we.Code})
	default:
		end(observe.ToolCallEnd{Outcome: "failed", ErrorClass: "error"})
	}
	return out, err
}

// childSpan starts and ends a span as the child's own instrumentation
// would, and fails when a value of the caller's context reached the child.
func (h *harness) childSpan(ctx context.Context, name string) error {
	_, sp := h.tp.Tracer("child").Start(ctx, name)
	sp.End()
	if ctx.Value(callerKey{}) != nil {
		return errors.New("a caller's context value reached the child")
	}
	return nil
}

func TestSpans(t *testing.T) {
	tests := []struct {
		name string
		opts []work.Option
		run  func(t *testing.T, h *harness, ctx context.Context)
		want string
	}{
		{
			name: "background",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				release := make(chan struct{})
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					<-release
					if err := h.childSpan(ctx, "child chat"); err != nil {
						return "", err
					}
					ex, _ := work.ExecutionFrom(ctx)
					return "result:" + boundary.Guidance(ex)[0], nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				h.action(ctx, "send", id, func(context.Context) (string, string) {
					if _, err := h.s.Send(ctx, h.owner, id, "call_send", "focus"); err != nil {
						t.Fatal(err)
					}
					return "ok", ""
				})
				close(release)
				h.action(ctx, "result", id, func(ctx context.Context) (string, string) {
					st, out, err := h.s.Result(ctx, h.owner, id, work.MaxResultWait)
					if err != nil || st.State != work.StateCompleted || out != "result:focus" {
						t.Fatalf("result: %v %q %v", st.State, out, err)
					}
					return "ok", ""
				})
			},
			want: `child chat kind=internal parent=invoke_agent researcher trace=t1 links=[] status=Unset
  attrs
coordinator kind=internal parent=root trace=t2 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t2 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
execute_tool work kind=internal parent=coordinator trace=t2 links=[] status=Unset
  attrs {agentwork.action=send agentwork.work.id=<id> gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_send gen_ai.tool.name=work gen_ai.tool.type=function}
execute_tool work kind=internal parent=coordinator trace=t2 links=[] status=Unset
  attrs {agentwork.action=result agentwork.work.id=<id> gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_result gen_ai.tool.name=work gen_ai.tool.type=function}
  event agentwork.work.result.read {agentwork.result.bytes=12}
invoke_agent researcher kind=internal parent=root trace=t1 links=[execute_tool researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.guidance.accepted {agentwork.guidance.count=1}
  event agentwork.work.guidance.delivered {agentwork.guidance.count=1}
  event agentwork.work.completed {agentwork.result.bytes=12 agentwork.work.state=completed}
`,
		},
		{
			name: "foreground",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				out, err := h.foreground(ctx, summarizer, func(ctx context.Context) (string, error) {
					return "summary", h.childSpan(ctx, "child tool")
				})
				if err != nil || out != "summary" {
					t.Fatalf("foreground: %q %v", out, err)
				}
			},
			want: `child tool kind=internal parent=execute_tool summarizer trace=t1 links=[] status=Unset
  attrs
coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool summarizer kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.work.target=summarizer gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_fg gen_ai.tool.name=summarizer gen_ai.tool.type=function}
`,
		},
		{
			name: "foreground agent with target info",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				ctx = observe.WithTargetInfo(ctx, observe.TargetInfo{Provider: "openai", AgentID: "researcher-v2", Description: "Researches a topic."})
				out, err := h.foreground(ctx, researcher, func(ctx context.Context) (string, error) {
					return "report", h.childSpan(ctx, "child chat")
				})
				if err != nil || out != "report" {
					t.Fatalf("foreground: %q %v", out, err)
				}
			},
			want: `child chat kind=internal parent=invoke_agent researcher trace=t1 links=[] status=Unset
  attrs
coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_fg gen_ai.tool.description=Researches a topic. gen_ai.tool.name=researcher gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=execute_tool researcher trace=t1 links=[] status=Unset
  attrs {agentwork.work.target=researcher gen_ai.agent.id=researcher-v2 gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=openai}
`,
		},
		{
			name: "background with target info",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				ctx = observe.WithTargetInfo(ctx, observe.TargetInfo{Provider: "gcp.gemini", AgentID: "researcher-v2", Description: "Researches a topic."})
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(context.Context) (string, error) { return "x", nil }})
				if err != nil {
					t.Fatal(err)
				}
				h.await(id, work.StateCompleted)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.description=Researches a topic. gen_ai.tool.name=researcher gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=researcher gen_ai.agent.id=researcher-v2 gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=gcp.gemini}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.completed {agentwork.result.bytes=1 agentwork.work.state=completed}
`,
		},
		{
			name: "foreground panic",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				_, err := h.foreground(ctx, summarizer, func(ctx context.Context) (string, error) {
					panic("boom")
				})
				if !errors.Is(err, work.ErrChildFailed) {
					t.Fatalf("foreground: %v", err)
				}
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool summarizer kind=internal parent=coordinator trace=t1 links=[] status=Error
  attrs {agentwork.work.target=summarizer error.type=panic gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_fg gen_ai.tool.name=summarizer gen_ai.tool.type=function}
`,
		},
		{
			name: "cancel",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					<-ctx.Done()
					return "", ctx.Err()
				}})
				if err != nil {
					t.Fatal(err)
				}
				h.action(ctx, "cancel", id, func(context.Context) (string, string) {
					if r, err := h.s.Cancel(ctx, h.owner, id); err != nil || !r.Accepted {
						t.Fatalf("cancel: %+v %v", r, err)
					}
					return "ok", ""
				})
				h.await(id, work.StateCancelled)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
execute_tool work kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.action=cancel agentwork.work.id=<id> gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_cancel gen_ai.tool.name=work gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=cancelled agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.cancel_requested {agentwork.work.state=cancel-requested}
  event agentwork.work.cancelled {agentwork.work.state=cancelled}
`,
		},
		{
			name: "cancel queued",
			opts: []work.Option{work.WithMaxRunning(1)},
			run: func(t *testing.T, h *harness, ctx context.Context) {
				release := make(chan struct{})
				blocker, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) {
					<-release
					return "", nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					return "never", nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.s.Send(ctx, h.owner, id, "", "never read"); err != nil {
					t.Fatal(err)
				}
				h.action(ctx, "cancel", id, func(context.Context) (string, string) {
					if r, err := h.s.Cancel(ctx, h.owner, id); err != nil || r.State != work.StateCancelled {
						t.Fatalf("cancel: %+v %v", r, err)
					}
					return "ok", ""
				})
				close(release)
				h.await(blocker, work.StateCompleted)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
execute_tool summarizer kind=internal parent=coordinator trace=t1 links=[invoke_agent summarizer] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=summarizer gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=summarizer gen_ai.tool.type=function}
execute_tool work kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.action=cancel agentwork.work.id=<id> gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_cancel gen_ai.tool.name=work gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=cancelled agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.guidance.accepted {agentwork.guidance.count=1}
  event agentwork.work.guidance.dropped {agentwork.guidance.count=1}
  event agentwork.work.cancelled {agentwork.work.state=cancelled}
invoke_agent summarizer kind=internal parent=root trace=t3 links=[execute_tool summarizer] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=summarizer gen_ai.agent.name=summarizer gen_ai.operation.name=invoke_agent}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.completed {agentwork.result.bytes=0 agentwork.work.state=completed}
`,
		},
		{
			name: "failure",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					return "", errors.New("provider said no")
				}})
				if err != nil {
					t.Fatal(err)
				}
				h.await(id, work.StateFailed)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Error
  attrs {agentwork.work.id=<id> agentwork.work.state=failed agentwork.work.target=researcher error.type=error gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.failed {agentwork.work.state=failed error.type=error}
`,
		},
		{
			name: "panic",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					panic("boom")
				}})
				if err != nil {
					t.Fatal(err)
				}
				h.await(id, work.StateFailed)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Error
  attrs {agentwork.work.id=<id> agentwork.work.state=failed agentwork.work.target=researcher error.type=panic gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.failed {agentwork.work.state=failed error.type=panic}
`,
		},
		{
			name: "deadline",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				id, err := h.launch(ctx, researcher, work.Spec{Budget: work.Budget{MaxDuration: time.Second}, Run: func(ctx context.Context) (string, error) {
					<-ctx.Done()
					return "", ctx.Err()
				}})
				if err != nil {
					t.Fatal(err)
				}
				h.clk.Advance(time.Second)
				h.await(id, work.StateFailed)
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Error
  attrs {agentwork.work.budget=duration agentwork.work.id=<id> agentwork.work.state=failed agentwork.work.target=researcher error.type=deadline_exceeded gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.budget_exhausted {agentwork.work.budget=duration}
  event agentwork.work.failed {agentwork.work.state=failed error.type=deadline_exceeded}
`,
		},
		{
			name: "detach, refusal and status block",
			opts: []work.Option{work.WithMaxStarts(1)},
			run: func(t *testing.T, h *harness, ctx context.Context) {
				id, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
					<-ctx.Done()
					return "", ctx.Err()
				}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) {
					return "", nil
				}}); !errors.Is(err, work.ErrLimit) {
					t.Fatalf("second start: %v", err)
				}
				h.obs.Event(ctx, observe.Event{Type: observe.EventStatusBlock, Owner: h.owner.ID(), Count: 1})
				h.action(ctx, "detach", id, func(context.Context) (string, string) {
					if _, err := h.s.Detach(ctx, h.owner, id); err != nil {
						t.Fatal(err)
					}
					return "ok", ""
				})
				h.action(ctx, "status", id, func(context.Context) (string, string) {
					if _, err := h.s.Status(ctx, h.owner, id); !errors.Is(err, work.ErrNotFound) {
						t.Fatalf("status after detach: %v", err)
					}
					return "not_found", "not_found"
				})
				// Close cancels the detached Work; it ends cancelled and is
				// forgotten.
				if err := h.s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			},
			want: `coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
  event agentwork.status_block {agentwork.status_block.rows=1}
execute_tool researcher kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=researcher gen_ai.tool.type=function}
execute_tool summarizer kind=internal parent=coordinator trace=t1 links=[] status=Error
  attrs {agentwork.work.target=summarizer error.type=limit_exceeded gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_launch gen_ai.tool.name=summarizer gen_ai.tool.type=function}
  event agentwork.start.refused {error.type=starts}
execute_tool work kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.action=detach agentwork.work.id=<id> gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_detach gen_ai.tool.name=work gen_ai.tool.type=function}
execute_tool work kind=internal parent=coordinator trace=t1 links=[] status=Error
  attrs {agentwork.action=status agentwork.work.id=<id> error.type=not_found gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_status gen_ai.tool.name=work gen_ai.tool.type=function}
invoke_agent researcher kind=internal parent=root trace=t2 links=[execute_tool researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=cancelled agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.detached
  event agentwork.work.cancel_requested {agentwork.work.state=cancel-requested}
  event agentwork.work.cancelled {agentwork.work.state=cancelled}
`,
		},
		{
			// The framework traces each tool call itself (an Eino
			// callbacks.Handler) and the adapter says so
			// (observe.WithToolCallTraced): no execute_tool span of agentwork's;
			// the framework's span gets agentwork's attributes, the
			// launch's link and the foreground agent child's span.
			name: "traced by the framework",
			run: func(t *testing.T, h *harness, ctx context.Context) {
				tr := h.tp.Tracer("framework")
				lctx, lsp := tr.Start(ctx, "framework launch")
				id, err := h.launch(observe.WithToolCallTraced(lctx), researcher, work.Spec{Run: func(context.Context) (string, error) { return "x", nil }})
				lsp.End()
				if err != nil {
					t.Fatal(err)
				}
				h.await(id, work.StateCompleted)
				fctx, fsp := tr.Start(ctx, "framework call")
				out, err := h.foreground(observe.WithToolCallTraced(fctx), researcher, func(ctx context.Context) (string, error) {
					return "report", h.childSpan(ctx, "child chat")
				})
				fsp.End()
				if err != nil || out != "report" {
					t.Fatalf("foreground: %q %v", out, err)
				}
				actx, asp := tr.Start(ctx, "framework action")
				h.action(observe.WithToolCallTraced(actx), "status", id, func(context.Context) (string, string) { return "ok", "" })
				asp.End()
			},
			want: `child chat kind=internal parent=invoke_agent researcher trace=t1 links=[] status=Unset
  attrs
coordinator kind=internal parent=root trace=t1 links=[] status=Unset
  attrs
framework action kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.action=status agentwork.work.id=<id>}
framework call kind=internal parent=coordinator trace=t1 links=[] status=Unset
  attrs {agentwork.work.target=researcher}
framework launch kind=internal parent=coordinator trace=t1 links=[invoke_agent researcher] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.target=researcher}
invoke_agent researcher kind=internal parent=root trace=t2 links=[framework launch] status=Unset
  attrs {agentwork.work.id=<id> agentwork.work.state=completed agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
  event agentwork.work.queued {agentwork.work.state=queued}
  event agentwork.work.running {agentwork.work.state=running}
  event agentwork.work.completed {agentwork.result.bytes=1 agentwork.work.state=completed}
invoke_agent researcher kind=internal parent=framework call trace=t1 links=[] status=Unset
  attrs {agentwork.work.target=researcher gen_ai.agent.name=researcher gen_ai.operation.name=invoke_agent gen_ai.provider.name=_OTHER}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts...)
			ctx, root := h.root()
			ctx = context.WithValue(ctx, callerKey{}, "caller only")
			tt.run(t, h, ctx)
			// Close waits for every child goroutine, so every event has
			// been delivered; nothing is left running to cancel.
			if err := h.s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			root.End()
			diff(t, "spans", renderSpans(h.spans.Ended()), tt.want)
			if n := len(h.spans.Started()) - len(h.spans.Ended()); n != 0 {
				t.Errorf("%d spans never ended", n)
			}
		})
	}
}
