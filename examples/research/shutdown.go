package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/agentwork/agentwork/work"
)

// defaultDrain is how long the demo's Shutdown lets background work finish
// before cancelling it.
const defaultDrain = 3 * time.Second

// shutdown drains the in-process engine (work.Engine.Shutdown: new starts
// are refused, live work may finish for drain, then the rest is cancelled),
// and prints the content-free report; the telemetry Observer logs it
// through the demo's slog logger (Warn when work had to be cancelled or was
// orphaned).
func shutdown(w io.Writer, sup *work.Engine, tel *telemetrySetup, drain time.Duration) {
	if drain <= 0 {
		drain = defaultDrain
	}
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	rep, err := sup.Shutdown(ctx)
	if err != nil {
		fmt.Fprintln(w, "shutdown:", err)
		return
	}
	fmt.Fprintf(w, "\n== shutdown ==\n%s\n", rep)
}
