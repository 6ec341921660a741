package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// awayEngine is a watched durable engine whose service may be away: its
// Snapshot then waits for ctx and fails, counting its calls.
type awayEngine struct {
	away  atomic.Bool
	calls atomic.Int32
}

func (a *awayEngine) Snapshot(ctx context.Context) (observe.Snapshot, error) {
	if !a.away.Load() {
		return observe.Snapshot{Time: time.Now(), Deployment: true,
			Counts: []observe.TargetCounts{{Target: "research", Counts: [len(observe.States)]int{2, 1}}}}, nil
	}
	a.calls.Add(1)
	<-ctx.Done()
	return observe.Snapshot{}, driver.Wrap(work.ErrUnavailable, ctx.Err())
}

// TestEngineAvailable: agentwork_engine_available is 1 while the watched
// engine answers and 0 while it does not, within the snapshot bound (one
// wait per collection, not one per callback); the counts it held are
// then absent, not zero, and the status page says the engine is
// unavailable.
func TestEngineAvailable(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	const bound = 200 * time.Millisecond
	obs, err := telemetry.New(telemetry.WithMeterProvider(mp), telemetry.WithoutTracing(), telemetry.WithSnapshotTimeout(bound))
	if err != nil {
		t.Fatal(err)
	}
	eng := &awayEngine{}
	defer obs.Watch(eng)()
	collect := func() (available int64, items []int64) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		available = -1
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				g, ok := m.Data.(metricdata.Gauge[int64])
				if !ok {
					continue
				}
				for _, dp := range g.DataPoints {
					switch m.Name {
					case "agentwork.engine.available":
						available = dp.Value
					case "agentwork.work.items":
						items = append(items, dp.Value)
					}
				}
			}
		}
		return available, items
	}
	if a, items := collect(); a != 1 || !slices.Contains(items, 2) {
		t.Fatalf("engine answering: available %d, items %v; want 1 and the counts", a, items)
	}
	eng.away.Store(true)
	began := time.Now()
	a, items := collect()
	took := time.Since(began)
	if a != 0 || len(items) != 0 {
		t.Fatalf("engine away: available %d, items %v; want 0 and no counts (not zeroes)", a, items)
	}
	if n := eng.calls.Load(); n != 1 || took > 2*bound+bound/2 {
		t.Fatalf("engine away: %d snapshots in %v, want one, within the bound %v", n, took, bound)
	}
	rec := httptest.NewRecorder()
	obs.StatusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/statusz?format=json", nil))
	var page telemetry.StatusPage
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	if page.Engines.Available || page.Engines.Unavailable != 1 || page.Engines.Watched != 1 || len(page.Targets) != 0 {
		t.Fatalf("status page while away: %+v", page)
	}
	rec = httptest.NewRecorder()
	obs.StatusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/statusz", nil))
	if !strings.Contains(rec.Body.String(), `id="engine-unavailable"`) {
		t.Fatalf("the HTML page does not say the engine is unavailable:\n%s", rec.Body.String())
	}
	eng.away.Store(false)
	if a, _ := collect(); a != 1 {
		t.Fatalf("engine back: available %d, want 1", a)
	}
}
