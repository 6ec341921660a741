package temporal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"google.golang.org/protobuf/proto"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

const (
	canaryInput    = "CANARY-INPUT-7f3a"
	canaryOutput   = "CANARY-OUTPUT-7f3a"
	canaryFailure  = "CANARY-FAILURE-7f3a"
	canaryGuidance = "CANARY-GUIDANCE-7f3a"
)

// history returns the raw bytes of every event of a workflow's history
// (payloads included verbatim).
func history(t *testing.T, c client.Client, id string) []byte {
	t.Helper()
	return historyRun(t, c, id, "")
}

// historyRun is history of run runID ("" for the latest).
func historyRun(t *testing.T, c client.Client, id, runID string) []byte {
	t.Helper()
	var buf bytes.Buffer
	it := c.GetWorkflowHistory(context.Background(), id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	return buf.Bytes()
}

// TestCanary: failure text reaches no history; the owner's registry holds
// no content at all; the Work's own history holds only its input, its
// result and its guidance (Temporal payloads, see the package doc); no
// span of the SDK's OpenTelemetry interceptor carries any of them.
func TestCanary(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracing, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{Tracer: tp.Tracer("canary")})
	if err != nil {
		t.Fatal(err)
	}
	_, hostPort, ns := serverWithAddr(t)
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: ns, Interceptors: []interceptor.ClientInterceptor{tracing}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The agentwork telemetry Observer on the worker (the lifecycle) and
	// the coordinator (refusals, result reads), on the same tracer.
	tel := newObserved(t, tp)
	opts := []temporal.Option{temporal.WithTaskQueue("canary"), temporal.WithHeartbeatTimeout(2 * time.Second), temporal.WithOptions(work.WithObserver(tel.obs))}
	took := make(chan []string, 1)
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"ok":   {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return canaryOutput, nil }},
		"fail": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "", errors.New(canaryFailure) }},
		"steer": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			for {
				if g := boundary.Guidance(ex); len(g) > 0 {
					took <- g
					return "steered", nil
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(20 * time.Millisecond): // a model boundary every 20ms
				}
			}
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("canary-owner")
	start := func(label string) string {
		ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: label, Kind: map[bool]observe.Kind{true: work.KindAgent, false: work.KindFunction}[label == "steer"]},
			Input: canaryInput, Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		return ref.ID
	}
	okID, failID, steerID := start("ok"), start("fail"), start("steer")
	if _, err := eng.Send(t.Context(), o, steerID, "call-1", canaryGuidance); err != nil {
		t.Fatal(err)
	}
	if g := <-took; len(g) != 1 || g[0] != canaryGuidance {
		t.Fatalf("guidance delivered = %q", g)
	}
	for _, id := range []string{okID, failID, steerID} {
		for {
			st, _, err := eng.Result(context.Background(), o, id, work.MaxResultWait)
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				break
			}
		}
	}
	_ = eng.List
	rows, _, _ := boundary.Rows(t.Context(), eng, o)
	for _, r := range rows {
		if strings.Contains(r.TargetLabel+string(r.State), "CANARY") {
			t.Fatalf("row carries content: %+v", r)
		}
	}
	all := [][]byte{history(t, c, okID), history(t, c, failID), history(t, c, steerID)}
	for i, h := range all {
		if bytes.Contains(h, []byte(canaryFailure)) {
			t.Fatalf("history %d carries failure text", i)
		}
	}
	if !bytes.Contains(all[0], []byte(canaryOutput)) {
		t.Fatal("the completed Work's history lacks its result (the canary check is broken)")
	}
	if bytes.Contains(all[2], []byte(canaryGuidance)) {
		t.Fatal("the steered Work's history holds its guidance")
	}
	// The guidance's holder deleted itself once the child took the text
	// (deletion is asynchronous: poll).
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: ns, Query: "WorkflowType = '" + temporal.GuidanceWorkflowName + "'"})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Executions) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d guidance holders left a minute after delivery", len(resp.Executions))
		}
		time.Sleep(100 * time.Millisecond) // polling an asynchronous deletion
	}
	reg := history(t, c, "agentwork-owner/"+o.ID())
	for _, s := range []string{canaryInput, canaryOutput, canaryFailure, canaryGuidance} {
		if bytes.Contains(reg, []byte(s)) {
			t.Fatalf("the owner registry's history carries %s", s)
		}
	}
	spans := rec.Ended()
	if len(spans) == 0 {
		t.Fatal("the tracing interceptor recorded no span")
	}
	for _, id := range []string{okID, failID, steerID} {
		if n := len(invokeSpans(spans, id)); n != 1 {
			t.Fatalf("%d invoke_agent spans for %s, want 1 (the canary check is broken)", n, id)
		}
	}
	logged := tel.logs.String()
	if !strings.Contains(logged, "agentwork.work.completed") || !strings.Contains(logged, "agentwork.work.guidance.accepted") {
		t.Fatalf("the Observer logged no lifecycle (the canary check is broken):\n%s", logged)
	}
	if strings.Contains(logged, "CANARY") {
		t.Fatalf("a log line carries content:\n%s", logged)
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if m := fmt.Sprintf("%+v", rm); strings.Contains(m, "CANARY") || !strings.Contains(m, "agentwork.work.transitions") {
		t.Fatalf("metrics carry content or no lifecycle: %s", m)
	}
	for _, s := range spans {
		var b strings.Builder
		b.WriteString(s.Name())
		for _, a := range s.Attributes() {
			b.WriteString(a.Value.String())
		}
		for _, e := range s.Events() {
			b.WriteString(e.Name)
			for _, a := range e.Attributes {
				b.WriteString(a.Value.String())
			}
		}
		b.WriteString(s.Status().Description)
		if strings.Contains(b.String(), "CANARY") {
			t.Fatalf("span %q carries content: %s", s.Name(), b.String())
		}
	}
}
