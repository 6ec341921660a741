package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// TestCardinality runs the same mix of lifecycles at two sizes (1,000
// works across 20 owners, 10,000 across 100) and finds the same number of
// series, the number the bounded label sets allow: it depends on the
// targets, states, outcomes and actions, never on works or owners.
func TestCardinality(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 works")
	}
	targets := []work.Target{researcher, summarizer}
	const (
		states        = len(observe.States)
		terminal      = 3 // completed, failed, cancelled
		actions       = 6
		usedOutcomes  = 2 // ok, not_found
		guidanceKinds = 3
	)
	T := len(targets)
	want := T*states + // items
		1 + // engine available
		1 + // concurrency limit, target="*"
		T + // slots in use, by target
		2*T + // oldest queued and oldest cancel-requested age
		3*T + // waiting, awaiting approval, oldest approval age
		T*states + // transitions
		T*terminal + // duration
		T + // queue wait
		T + // result bytes
		actions*usedOutcomes + 1 + // actions, plus invalid/invalid
		guidanceKinds +
		1 + // status block rows
		T // refused, reason starts
	var counts []int
	for _, size := range []struct{ works, owners int }{{1000, 20}, {10000, 100}} {
		t.Run(fmt.Sprintf("%d works, %d owners", size.works, size.owners), func(t *testing.T) {
			n, labels := cardinalityRun(t, targets, size.works, size.owners)
			if n != want {
				t.Errorf("%d series, want %d", n, want)
			}
			for _, l := range labels {
				if workIDPattern.MatchString(l) || strings.Contains(l, "owner") {
					t.Errorf("label value %q is an id", l)
				}
			}
			counts = append(counts, n)
		})
	}
	if len(counts) == 2 && counts[0] != counts[1] {
		t.Errorf("series: %d at the small size, %d at the large one", counts[0], counts[1])
	}
}

// cardinalityRun drives works Works across owners owners, sequentially, in
// a fixed mix: completed, failed, cancelled while running with guidance
// dropped, completed after guidance was delivered; one work-tool action per
// Work, a status block and a refused start per owner. It returns the number
// of series and every label value.
func cardinalityRun(t *testing.T, targets []work.Target, works, owners int) (int, []string) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithMeterProvider(mp), telemetry.WithoutTracing())
	if err != nil {
		t.Fatal(err)
	}
	perOwner := works / owners
	s := work.New(work.WithObserver(obs), work.WithMaxStarts(perOwner))
	defer s.Close(context.Background())
	ctx := context.Background()
	actions := []string{"list", "status", "result", "cancel", "detach", "send"}
	for j := range owners {
		o := work.NewOwner(fmt.Sprintf("owner-%d", j))
		for i := range perOwner {
			tgt := targets[(i/4)%len(targets)]
			kind := i % 4
			if kind == 3 && tgt.Kind != work.KindAgent {
				kind = 0
			}
			release := make(chan struct{})
			run := func(ctx context.Context) (string, error) {
				switch kind {
				case 1:
					return "", errors.New("failed")
				case 2:
					<-ctx.Done()
					return "", ctx.Err()
				case 3:
					<-release
					ex, _ := work.ExecutionFrom(ctx)
					return strings.Join(boundary.Guidance(ex), ""), nil
				}
				return "output", nil
			}
			ref, err := s.Start(ctx, work.Spec{Owner: o, Target: tgt, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case 2:
				if tgt.Kind == work.KindAgent {
					if _, err := s.Send(ctx, o, ref.ID, "", "never read"); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Cancel(ctx, o, ref.ID); err != nil {
					t.Fatal(err)
				}
			case 3:
				if _, err := s.Send(ctx, o, ref.ID, "", "read"); err != nil {
					t.Fatal(err)
				}
				close(release)
			}
			if _, _, err := s.Result(ctx, o, ref.ID, work.MaxResultWait); err != nil {
				t.Fatal(err)
			}
			outcome := []string{"ok", "not_found"}[(i/len(actions))%2]
			_, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: actions[i%len(actions)], WorkID: ref.ID, Owner: o.ID()})
			end(observe.ToolCallEnd{Outcome: outcome})
		}
		_, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: fmt.Sprintf("bogus-%d", j), Owner: o.ID()})
		end(observe.ToolCallEnd{Outcome: "invalid", ErrorClass: "invalid_action"})
		rows, _, _ := boundary.Rows(ctx, s, o)
		obs.Event(ctx, observe.Event{Type: observe.EventStatusBlock, Owner: o.ID(), Count: len(rows)})
		if _, err := s.Start(ctx, work.Spec{Owner: o, Target: targets[j%len(targets)], Run: func(context.Context) (string, error) { return "", nil }}); !errors.Is(err, work.ErrLimit) {
			t.Fatalf("start beyond the limit: %v", err)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range dataPointSets(m.Data) {
				for _, kv := range set.ToSlice() {
					labels = append(labels, kv.Value.String())
				}
			}
		}
	}
	return len(series(rm)), labels
}
