package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// A background run, as the middleware drives it: the launch call, the
// execution (a new root linked to the launch) and the work-tool call that
// reads the result.
func ExampleNew() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithoutMetrics())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := work.New(work.WithObserver(obs))
	defer s.Close(ctx)
	owner := work.NewOwner("coordinator")

	release := make(chan struct{})
	lctx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: "researcher"})
	ref, err := s.Start(lctx, work.Spec{Owner: owner, Target: work.Target{Label: "researcher", Kind: work.KindAgent},
		Run: func(ctx context.Context) (string, error) {
			<-release
			return "findings", nil
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
	close(release)

	actx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "result", WorkID: ref.ID, Owner: owner.ID()})
	_, out, _ := s.Result(actx, owner, ref.ID, 30*time.Second)
	end(observe.ToolCallEnd{Outcome: "ok"})
	fmt.Println("result:", out)

	for _, sp := range spans.Ended() {
		var events []string
		for _, e := range sp.Events() {
			events = append(events, e.Name)
		}
		fmt.Println(sp.Name(), sp.Parent().IsValid(), len(sp.Links()), events)
	}
	// Output:
	// result: findings
	// execute_tool researcher false 1 []
	// invoke_agent researcher false 1 [agentwork.work.queued agentwork.work.running agentwork.work.completed]
	// execute_tool work false 0 [agentwork.work.result.read]
}

// The log lines of a failed background run (time, id and durations removed
// to keep the output stable). The failure is Warn; its text never appears.
func ExampleWithLogger() {
	ctx := context.Background()
	drop := map[string]bool{slog.TimeKey: true, "work.id": true, "duration": true, "queue_wait": true}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if drop[a.Key] {
				return slog.Attr{}
			}
			return a
		},
	}))
	obs, err := telemetry.New(telemetry.WithLogger(logger), telemetry.WithoutTracing(), telemetry.WithoutMetrics())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := work.New(work.WithObserver(obs))
	owner := work.NewOwner("coordinator")
	ref, err := s.Start(ctx, work.Spec{Owner: owner, Target: work.Target{Label: "researcher", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "", errors.New("secret failure text") }})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, _ = s.Result(ctx, owner, ref.ID, 30*time.Second) // returns once it failed
	_ = s.Close(ctx)                                       // waits until its last event is logged
	// Output:
	// {"level":"DEBUG","msg":"agentwork.work.queued","work.target":"researcher","work.state":"queued","owner.depth":0}
	// {"level":"DEBUG","msg":"agentwork.work.running","work.target":"researcher","work.state":"running","from":"queued","owner.depth":0}
	// {"level":"WARN","msg":"agentwork.work.failed","work.target":"researcher","work.state":"failed","from":"running","error.type":"error","owner.depth":0}
}
