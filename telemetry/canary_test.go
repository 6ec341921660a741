package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

const canary = "CANARY-c0ffee-5e1f-do-not-export"

// TestCanary plants a unique string everywhere content can enter the
// engine (child output, child error text, a panic value, guidance text,
// foreground output and errors, the input and output of a call that moved
// to the background and the error of one that failed before its bound, an owner id, and the model-controlled
// fields of a work-tool call) and proves it reaches no span name,
// attribute, event, link or status description, no metric name, unit,
// description or label, and no log line.
func TestCanary(t *testing.T) {
	h := newHarness(t, work.WithMaxRunning(2))
	h.owner = work.NewOwner("owner-" + canary)
	ctx, root := h.root()

	// A call that moves to the background at its bound (the canary in its
	// input and output), read through the work tool; one that fails in
	// time (the canary in the error text).
	moved := make(chan struct{})
	set := moverSet(t, h.s, h.owner, time.Second, moved, "moved output "+canary)
	ref := moveCall(t, h, ctx, set, `{"input":"moved input `+canary+`"}`, 2, time.Second)
	close(moved)
	if out, _ := set.Tools()[1].Call(ctx, `{"action":"result","id":"`+workIDPattern.FindString(ref)+`"}`); !strings.Contains(out, canary) {
		t.Fatalf("the moved call's result: %s", out)
	}
	failing, err := middleware.Prepare(h.s, work.NewOwner("failing"), map[string]any{"mover": middleware.Backgroundable(middleware.Child{
		Kind: work.KindFunction, AutoBackground: &middleware.AutoBackground{After: time.Second},
		Run: func(context.Context, string) (string, error) { return canary, errors.New("failure " + canary) }})})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := failing.Tools()[0].Call(ctx, `{"input":"`+canary+`"}`); !strings.Contains(out, "child_failed") || strings.Contains(out, canary) {
		t.Fatalf("the failed call: %s", out)
	}

	// Completed with the canary as output, read through the work tool.
	release := make(chan struct{})
	done, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
		<-release
		ex, _ := work.ExecutionFrom(ctx)
		return strings.Join(boundary.Guidance(ex), "|") + canary, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.action(ctx, "send", done, func(context.Context) (string, string) {
		if _, err := h.s.Send(ctx, h.owner, done, "call_1", "guidance "+canary); err != nil {
			t.Fatal(err)
		}
		return "ok", ""
	})
	close(release)
	h.action(ctx, "result", done, func(ctx context.Context) (string, string) {
		_, out, err := h.s.Result(ctx, h.owner, done, work.MaxResultWait)
		if err != nil || !strings.Contains(out, canary) {
			t.Fatalf("result %q %v", out, err)
		}
		return "ok", ""
	})

	// Failed with the canary in the error text, and in a panic value.
	failed, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) {
		return canary, errors.New("failure " + canary)
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.await(failed, work.StateFailed)
	panicked, err := h.launch(ctx, summarizer, work.Spec{Run: func(ctx context.Context) (string, error) {
		panic(canary)
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.await(panicked, work.StateFailed)

	// A deadline, with the canary in the error the child returns.
	late, err := h.launch(ctx, researcher, work.Spec{Budget: work.Budget{MaxDuration: time.Second}, Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return canary, fmt.Errorf("%s: %w", canary, ctx.Err())
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Second)
	h.await(late, work.StateFailed)

	// Guidance dropped unread when the Work is cancelled.
	dropped, err := h.launch(ctx, researcher, work.Spec{Run: func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return canary, ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.Send(ctx, h.owner, dropped, canary, canary); err != nil {
		t.Fatal(err)
	}
	h.action(ctx, "cancel", dropped, func(context.Context) (string, string) {
		if _, err := h.s.Cancel(ctx, h.owner, dropped); err != nil {
			t.Fatal(err)
		}
		return "ok", ""
	})
	h.await(dropped, work.StateCancelled)

	// Foreground: output, error and panic.
	if out, err := h.foreground(ctx, summarizer, func(context.Context) (string, error) { return canary, nil }); out != canary || err != nil {
		t.Fatalf("foreground: %q %v", out, err)
	}
	if _, err := h.foreground(ctx, summarizer, func(context.Context) (string, error) { return canary, errors.New(canary) }); err == nil {
		t.Fatal("foreground error: nil")
	}
	if _, err := h.foreground(ctx, summarizer, func(context.Context) (string, error) { panic(errors.New(canary)) }); err == nil {
		t.Fatal("foreground panic: nil")
	}

	// Model-controlled call fields, and a caller that puts error text where
	// a class belongs.
	_, end := h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: canary, WorkID: canary, Owner: h.owner.ID()})
	end(observe.ToolCallEnd{Outcome: canary, ErrorClass: "invalid input: " + canary})
	_, end = h.obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: "status", WorkID: canary + "0123456789abcdef", CallID: "call " + canary})
	end(observe.ToolCallEnd{Outcome: "not_found", ErrorClass: canary})
	root.End()

	// Something was recorded everywhere.
	spans := h.spans.Ended()
	if len(spans) < 15 {
		t.Fatalf("only %d spans", len(spans))
	}
	rm := h.collect()
	if len(series(rm)) < 20 {
		t.Fatalf("only %d series: %q", len(series(rm)), series(rm))
	}
	logs := h.logs.String()
	if strings.Count(logs, "\n") < 20 {
		t.Fatalf("only %d log lines", strings.Count(logs, "\n"))
	}

	leak := func(where, s string) {
		t.Helper()
		// The fragment holds a '-', which no hexadecimal id has.
		if strings.Contains(s, canary) || strings.Contains(s, "c0ffee-5e1f") {
			t.Errorf("canary in %s: %q", where, s)
		}
	}
	attrs := func(where string, kvs []attribute.KeyValue) {
		t.Helper()
		for _, kv := range kvs {
			leak(where+" attribute key", string(kv.Key))
			leak(where+" attribute "+string(kv.Key), kv.Value.String())
		}
	}
	for _, s := range spans {
		leak("span name", s.Name())
		attrs("span "+s.Name(), s.Attributes())
		leak("status description of "+s.Name(), s.Status().Description)
		for _, e := range s.Events() {
			leak("event name", e.Name)
			attrs("event "+e.Name, e.Attributes)
		}
		for _, l := range s.Links() {
			attrs("link of "+s.Name(), l.Attributes)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			leak("metric name", m.Name)
			leak("metric description", m.Description)
			leak("metric unit", m.Unit)
			for _, set := range dataPointSets(m.Data) {
				attrs("metric "+m.Name, set.ToSlice())
			}
		}
	}
	for _, line := range strings.Split(logs, "\n") {
		leak("log line", line)
	}
	if strings.Contains(logs, "owner-") {
		t.Errorf("an owner id reached the log")
	}
}

func dataPointSets(d metricdata.Aggregation) []attribute.Set {
	var out []attribute.Set
	switch d := d.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	}
	return out
}
