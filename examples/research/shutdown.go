package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/agentwork/agentwork/work"
)

// defaultDrain is how long the demo's Shutdown lets background work finish
// before cancelling it.
const defaultDrain = 3 * time.Second

// shutdown drains the Supervisor (work.Supervisor.Shutdown: new starts are
// refused, live work may finish for drain, then the rest is cancelled),
// prints the content-free report and logs it through the demo's slog
// logger (Warn when work had to be cancelled or was orphaned).
func shutdown(w io.Writer, sup *work.Supervisor, tel *telemetrySetup, drain time.Duration) {
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
	level := slog.LevelInfo
	if !rep.Drained || rep.OrphanCount() > 0 {
		level = slog.LevelWarn
	}
	tel.logger.Log(context.Background(), level, "work supervisor shut down", "report", rep)
}
