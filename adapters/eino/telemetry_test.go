package eino_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/adapters/eino"
	"github.com/agentwork/agentwork/adapters/eino/scripted"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
)

const canary = "CANARY-e1n0-5e1f-do-not-export"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTelemetryCanary runs an Eino coordinator with an agent child and a
// function child under the telemetry Observer, planting a canary in the
// coordinator's prompt, the child's input, its guidance, its update, its
// output and a failure's text, and proves it reaches no span, event,
// attribute, metric or log line; the spans are the contract's, and the
// agent child's invoke_agent span carries gen_ai.provider.name.
func TestTelemetryCanary(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logs := &syncBuffer{}
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp),
		telemetry.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	sup := work.New(work.WithObserver(obs))
	defer func() {
		_ = sup.Close(context.Background())
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}()
	mw := eino.New(sup)
	defer mw.Release()

	g := newGate()
	child := scripted.New(
		scripted.Call("emit_update", `{"value":"update `+canary+`"}`),
		scripted.Call("wait_for_data", `{}`),
		scripted.Text("output "+canary),
	)
	agentChild := eino.FromAgent(newAgent(t, "researcher", child, []tool.BaseTool{g.tool(t)}, eino.ChildMiddleware()),
		eino.WithUpdates(work.UpdatePolicy{}))
	failing := eino.NewFunction("fetch", "Fetches.", func(context.Context, string) (string, error) {
		return "", errors.New("failure " + canary)
	})
	var id, failed string
	coord := scripted.New(
		scripted.Calls(
			scripted.ToolCall{ID: "call_r", Name: "researcher", Arguments: `{"input":"input ` + canary + `","run_in_background":true}`},
			scripted.ToolCall{ID: "call_f", Name: "fetch", Arguments: `{"input":"x","run_in_background":true}`},
		),
		scripted.Func(func(r scripted.Request) scripted.Step {
			id = ref(t, r.Messages[len(r.Messages)-3].Text).ID
			failed = ref(t, r.Messages[len(r.Messages)-2].Text).ID
			<-g.entered
			return scripted.CallID("call_s", "work", `{"action":"send","id":"`+id+`","message":"guidance `+canary+`"}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			close(g.release)
			return scripted.CallID("call_res", "work", `{"action":"result","id":"`+id+`","timeout":"10s"}`)
		}),
		scripted.Func(func(scripted.Request) scripted.Step {
			return scripted.CallID("call_st", "work", `{"action":"result","id":"`+failed+`","timeout":"10s"}`)
		}),
		scripted.Text("done"),
	)
	agent := newAgent(t, "coordinator", coord, []tool.BaseTool{eino.Backgroundable(agentChild), eino.Backgroundable(failing)}, mw)
	_, results := mustRun(t, agent, "prompt "+canary)
	if results[3] != "output "+canary || !strings.Contains(results[4], `"state":"failed"`) {
		t.Fatalf("results = %q", results)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if err := sup.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	ended := spans.Ended()
	names := map[string]bool{}
	for _, s := range ended {
		names[s.Name()] = true
		if s.Name() == "invoke_agent researcher" {
			found := false
			for _, kv := range s.Attributes() {
				if kv.Key == "gen_ai.provider.name" && kv.Value.AsString() == "scripted" {
					found = true
				}
			}
			if !found {
				t.Errorf("invoke_agent researcher has no gen_ai.provider.name=scripted: %v", s.Attributes())
			}
		}
	}
	for _, want := range []string{"execute_tool researcher", "execute_tool fetch", "invoke_agent researcher", "invoke_agent fetch", "execute_tool work"} {
		if !names[want] {
			t.Errorf("no span %q among %v", want, names)
		}
	}
	leak := func(where, s string) {
		t.Helper()
		if strings.Contains(s, canary) || strings.Contains(s, "e1n0-5e1f") {
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
	for _, s := range ended {
		leak("span name", s.Name())
		attrs("span "+s.Name(), s.Attributes())
		leak("status of "+s.Name(), s.Status().Description)
		for _, e := range s.Events() {
			leak("event name", e.Name)
			attrs("event "+e.Name, e.Attributes)
		}
	}
	series := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			series++
			leak("metric name", m.Name)
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					attrs("metric "+m.Name, p.Attributes.ToSlice())
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					attrs("metric "+m.Name, p.Attributes.ToSlice())
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					attrs("metric "+m.Name, p.Attributes.ToSlice())
				}
			}
		}
	}
	if series < 5 {
		t.Fatalf("only %d metrics", series)
	}
	out := logs.String()
	if strings.Count(out, "\n") < 5 {
		t.Fatalf("only %d log lines", strings.Count(out, "\n"))
	}
	for _, line := range strings.Split(out, "\n") {
		leak("log line", line)
	}
}
