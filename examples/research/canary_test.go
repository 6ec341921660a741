package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestCanaryNeverLeavesThroughTelemetry is the no-content guarantee, end to
// end through the langchaingo adapter: a unique string planted in the
// coordinator's prompt, a child's input, a child's output, a child's failure
// text, the guidance text and an approval request's input reaches the
// model, the children and the approver (positive controls) and appears in
// no span name, attribute, event, link, status description or resource, no
// metric name, label or help text, no slog line and no status block.
func TestCanaryNeverLeavesThroughTelemetry(t *testing.T) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	canary := "AGENTWORK-CANARY-" + hex.EncodeToString(b[:])
	t.Setenv("AGENTWORK_LOG", "debug")
	var out, logs bytes.Buffer
	var (
		spans      []sdktrace.ReadOnlySpan
		exposition bytes.Buffer
		gatherErr  error
	)
	cfg := config{canary: canary, logOutput: &logs, inspect: func(tel *telemetrySetup) {
		spans = tel.spans.Ended()
		families, err := tel.metrics.Registry().Gather()
		if err != nil {
			gatherErr = err
			return
		}
		enc := expfmt.NewEncoder(&exposition, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range families {
			if err := enc.Encode(f); err != nil {
				gatherErr = err
			}
		}
	}}
	if err := run(context.Background(), &out, cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	transcript := out.String()

	// Positive controls: the canary was planted where the contract allows it.
	for _, where := range []string{"[input " + canary, "[output " + canary, "[guidance " + canary, "[approval " + canary} {
		if !strings.Contains(transcript, where) {
			t.Errorf("positive control: transcript lacks %q: the canary was not planted", where)
		}
	}
	if logs.Len() == 0 {
		t.Fatal("no slog lines at debug level: the log check would prove nothing")
	}

	// Spans: names, attributes, events, links, status, resource.
	if len(spans) < 10 {
		t.Fatalf("only %d spans recorded", len(spans))
	}
	for _, s := range spans {
		var b strings.Builder
		fmt.Fprintf(&b, "%s|%s|%s|", s.Name(), s.Status().Code, s.Status().Description)
		for _, a := range s.Attributes() {
			fmt.Fprintf(&b, "%s=%s|", a.Key, a.Value.String())
		}
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "event %s|", e.Name)
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, "%s=%s|", a.Key, a.Value.String())
			}
		}
		for _, l := range s.Links() {
			fmt.Fprintf(&b, "link %s|", l.SpanContext.SpanID())
			for _, a := range l.Attributes {
				fmt.Fprintf(&b, "%s=%s|", a.Key, a.Value.String())
			}
		}
		for _, a := range s.Resource().Attributes() {
			fmt.Fprintf(&b, "%s=%s|", a.Key, a.Value.String())
		}
		if strings.Contains(b.String(), canary) {
			t.Errorf("span %q carries the canary: %s", s.Name(), b.String())
		}
	}

	// Metrics: the whole exposition, names, labels and help text.
	if gatherErr != nil {
		t.Fatal(gatherErr)
	}
	if !strings.Contains(exposition.String(), "agentwork_work_transitions_total") {
		t.Fatal("no agentwork metrics gathered: the metric check would prove nothing")
	}
	if strings.Contains(exposition.String(), canary) {
		t.Errorf("metrics carry the canary")
	}

	// slog lines.
	if strings.Contains(logs.String(), canary) {
		t.Errorf("slog lines carry the canary")
	}

	// Status blocks, as the coordinator's model saw them.
	blocks := 0
	for _, line := range strings.Split(transcript, "\n") {
		if strings.HasPrefix(line, "   | ") {
			blocks++
			if strings.Contains(line, canary) {
				t.Errorf("status block line carries the canary: %s", line)
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no status block in the transcript")
	}
}
