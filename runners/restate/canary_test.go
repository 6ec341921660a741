package restate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

const (
	canaryInput    = "CANARY-INPUT-5c1e"
	canaryOutput   = "CANARY-OUTPUT-5c1e"
	canaryFailure  = "CANARY-FAILURE-5c1e"
	canaryGuidance = "CANARY-GUIDANCE-5c1e"
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// query runs SQL on the admin API's introspection and returns the rows'
// JSON.
func query(t *testing.T, admin, sql string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": sql})
	req, _ := http.NewRequest(http.MethodPost, admin+"/query", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query %q: %s %s", sql, resp.Status, out)
	}
	return string(out)
}

// readable decodes a query's rows and the JSON inside their columns,
// turning every array of bytes (the journal's payloads) into text, so
// that a canary in a payload is found.
func readable(t *testing.T, rows string) string {
	t.Helper()
	var r struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(rows), &r); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				if _, ok := inner.(string); !ok {
					walk(inner)
				}
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			raw := make([]byte, 0, len(x))
			for _, y := range x {
				f, ok := y.(float64)
				if !ok || f < 0 || f > 255 {
					raw = nil
					break
				}
				raw = append(raw, byte(f))
			}
			if raw != nil {
				b.Write(raw)
				b.WriteByte('\n')
				return
			}
			for _, y := range x {
				walk(y)
			}
		}
	}
	for _, row := range r.Rows {
		walk(row)
	}
	return b.String()
}

// TestTelemetryAndCanary runs a completing, a failing and a steered Work
// with the telemetry Observer on the Engine and the Worker: each Work has
// one invoke_agent span with its lifecycle events; no span, attribute,
// metric or log line carries input, output, failure or guidance text; in
// Restate's own state and journal (read through the admin SQL
// introspection) the failure text never appears, the owners' registry
// holds no content, and the guidance text is gone once the child took it
// or its Work ended without taking it.
func TestTelemetryAndCanary(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	var logs logBuffer
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp),
		telemetry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		telemetry.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = obs.Unregister() }()
	var sdkLogs logBuffer
	took := make(chan []string, 1)
	atBoundary, leave := make(chan struct{}), make(chan struct{})
	e := deploy(t, map[string]restate.Child{
		"ok":   {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return canaryOutput, nil }},
		"fail": {Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "", errors.New(canaryFailure) }},
		"steer": {Kind: work.KindAgent, Run: func(ctx context.Context, _ string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			<-atBoundary
			took <- boundary.Guidance(ex)
			return "steered", nil
		}},
		// Ends without taking its guidance: the Work drops it.
		"ignore": {Kind: work.KindAgent, Run: func(context.Context, string) (string, error) {
			<-leave
			return "ignored", nil
		}},
	}, restate.WithOptions(work.WithObserver(obs)), restate.WithLogger(slog.NewJSONHandler(&sdkLogs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx := context.Background()
	o := work.NewOwner(fmt.Sprintf("canary-%d", time.Now().UnixNano()))
	start := func(label string, kind observe.Kind) work.Ref {
		ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: label, Kind: kind}, Input: canaryInput,
			Run: func(context.Context) (string, error) { return "", nil }})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	settle := func(ref work.Ref) (work.Status, string) {
		for {
			st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
			if err != nil {
				t.Fatal(err)
			}
			if st.State.Terminal() {
				return st, out
			}
		}
	}
	okRef, failRef, steerRef := start("ok", work.KindFunction), start("fail", work.KindFunction), start("steer", work.KindAgent)
	if _, err := e.Send(ctx, o, steerRef.ID, "cmd-1", canaryGuidance); err != nil {
		t.Fatal(err)
	}
	ignoreRef := start("ignore", work.KindAgent)
	if _, err := e.Send(ctx, o, ignoreRef.ID, "cmd-2", canaryGuidance+"-dropped"); err != nil {
		t.Fatal(err)
	}
	close(leave)
	close(atBoundary)
	if g := <-took; len(g) != 1 || g[0] != canaryGuidance {
		t.Fatalf("the child took %q; want the guidance", g)
	}
	if st, out := settle(okRef); st.State != work.StateCompleted || out != canaryOutput {
		t.Fatalf("ok: %+v %q", st, out)
	}
	if st, _ := settle(failRef); st.State != work.StateFailed || st.Class != work.ClassError {
		t.Fatalf("fail: %+v", st)
	}
	if st, _ := settle(steerRef); st.State != work.StateCompleted {
		t.Fatalf("steer: %+v", st)
	}
	if st, _ := settle(ignoreRef); st.State != work.StateCompleted {
		t.Fatalf("ignore: %+v", st)
	}
	_ = tp.ForceFlush(ctx)

	// One invoke_agent span per Work, with its lifecycle.
	per := map[string]int{}
	var telemetryText strings.Builder
	for _, s := range spans.Ended() {
		fmt.Fprintf(&telemetryText, "%s %v %v\n", s.Name(), s.Attributes(), s.Status())
		for _, ev := range s.Events() {
			fmt.Fprintf(&telemetryText, "%s %v\n", ev.Name, ev.Attributes)
		}
		if strings.HasPrefix(s.Name(), "invoke_agent ") {
			for _, a := range s.Attributes() {
				if a.Key == "agentwork.work.id" {
					per[a.Value.AsString()]++
				}
			}
		}
	}
	for _, ref := range []work.Ref{okRef, failRef, steerRef, ignoreRef} {
		if per[ref.ID] != 1 {
			t.Errorf("Work %s has %d invoke_agent spans; want 1 (%v)", ref.ID, per[ref.ID], per)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&telemetryText, "%+v\n", rm)
	all := telemetryText.String() + logs.String() + sdkLogs.String()
	for _, c := range []string{canaryInput, canaryOutput, canaryFailure, canaryGuidance} {
		if strings.Contains(all, c) {
			t.Errorf("telemetry or logs carry %s", c)
		}
	}
	if !strings.Contains(telemetryText.String(), "agentwork.work.completed") {
		t.Errorf("no completed event in the spans:\n%s", telemetryText.String())
	}

	// Restate's stored state and journal.
	s := server(t)
	state := query(t, s.Admin, "SELECT service_name, key, value_utf8 FROM state")
	journal := readable(t, query(t, s.Admin, "SELECT name, entry_json FROM sys_journal"))
	for _, c := range []string{canaryFailure, canaryGuidance} {
		if strings.Contains(state, c) {
			t.Errorf("Restate's state holds %s", c)
		}
	}
	for _, c := range []string{canaryFailure, canaryGuidance} {
		if strings.Contains(journal, c) {
			t.Errorf("Restate's journal holds %s", c)
		}
	}
	if owners := readable(t, query(t, s.Admin, "SELECT j.entry_json FROM sys_journal j JOIN sys_invocation i ON j.id = i.id "+
		"WHERE i.target_service_name LIKE '%.Owner' OR i.target_service_name LIKE '%.Control'")); strings.Contains(owners, canaryInput) {
		t.Errorf("the journals of the registry objects hold the child's input")
	}
	if !strings.Contains(journal, canaryInput) {
		t.Errorf("the Work's journal does not hold its input: the introspection read nothing (%.300s)", journal)
	}
	if !strings.Contains(state, canaryOutput) {
		t.Errorf("the output is not in the Work's state: the introspection read nothing (%.300s)", state)
	}
	// The answers of the control object's reads (the output, guidance a
	// boundary took) are not kept by Restate once answered: no completed
	// invocation of them is retained (no idempotency key, no journal
	// retention), so nothing can be attached to and read back.
	var kept struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(query(t, s.Admin, "SELECT target_handler_name, status FROM sys_invocation "+
		"WHERE target_service_name LIKE '%.Control' AND target_handler_name IN ('Output', 'Take', 'Updates', 'Request', 'Question')")), &kept); err != nil {
		t.Fatal(err)
	}
	if len(kept.Rows) != 0 {
		t.Errorf("Restate keeps invocations of the control object's reads: %v", kept.Rows)
	}
	var reg struct {
		Rows []struct {
			Service string `json:"service_name"`
			Value   string `json:"value_utf8"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(query(t, s.Admin, "SELECT service_name, value_utf8 FROM state WHERE service_name LIKE '%.Owner'")), &reg); err != nil {
		t.Fatal(err)
	}
	for _, r := range reg.Rows {
		for _, c := range []string{canaryInput, canaryOutput, canaryFailure, canaryGuidance} {
			if strings.Contains(r.Value, c) {
				t.Errorf("the owner registry %s holds %s", r.Service, c)
			}
		}
	}
}
