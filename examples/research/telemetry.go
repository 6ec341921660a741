package main

import (
	"context"
	"io"

	"github.com/agentwork/agentwork/work"
)

// telemetrySetup is the demo's observability: the observer, a root context
// for the run, a summary printer, the /metrics server and shutdown.
type telemetrySetup struct {
	observer    work.Observer
	rootContext func(context.Context) context.Context
	summary     func(io.Writer)
	serve       func(context.Context, io.Writer) error
	shutdown    func()
}

func setupTelemetry(context.Context, config) (*telemetrySetup, error) {
	return &telemetrySetup{
		observer:    work.NopObserver{},
		rootContext: func(ctx context.Context) context.Context { return ctx },
		summary:     func(io.Writer) {},
		serve:       func(context.Context, io.Writer) error { return nil },
		shutdown:    func() {},
	}, nil
}
