package promexport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/promexport"
)

// TestMisuseExporter: an Exporter New did not make (zero or nil) serves
// an empty exposition, has no provider or registry, and its Shutdown does
// nothing; New ignores nil options, a nil registerer and a nil resource.
func TestMisuseExporter(t *testing.T) {
	for name, e := range map[string]*promexport.Exporter{"nil": nil, "zero": new(promexport.Exporter)} {
		t.Run(name, func(t *testing.T) {
			run(t, name, func() {
				if err := e.Shutdown(context.Background()); err != nil {
					t.Errorf("Shutdown = %v", err)
				}
				_ = e.MeterProvider()
				_ = e.Registry()
				rec := httptest.NewRecorder()
				e.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				if rec.Code != http.StatusOK {
					t.Errorf("Handler answered %d", rec.Code)
				}
			})
		})
	}
	t.Run("a zero Exporter's provider given to telemetry", func(t *testing.T) {
		run(t, "telemetry.New", func() {
			o, err := telemetry.New(telemetry.WithMeterProvider(new(promexport.Exporter).MeterProvider()),
				telemetry.WithTracerProvider((*sdktrace.TracerProvider)(nil)))
			if err != nil {
				t.Fatalf("telemetry.New = %v", err)
			}
			_ = o.Unregister()
		})
	})
	t.Run("New with nil options", func(t *testing.T) {
		run(t, "New", func() {
			e, err := promexport.New(nil, promexport.WithRegisterer(nil), promexport.WithTargetInfo(nil))
			if err != nil {
				t.Fatalf("New = %v", err)
			}
			if err := e.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown = %v", err)
			}
			if err := e.Shutdown(context.Background()); err != nil {
				t.Errorf("second Shutdown = %v", err)
			}
		})
	})
}

func run(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case r := <-done:
		if r != nil {
			t.Fatalf("%s panicked: %v", name, r)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", name)
	}
}
