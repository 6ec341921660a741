package promexport_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agentwork/agentwork/telemetry"
	"github.com/agentwork/agentwork/telemetry/promexport"
	"github.com/agentwork/agentwork/work"
)

// Serve the agentwork metrics on a handler of their own.
func ExampleNew() {
	ctx := context.Background()
	exp, err := promexport.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exp.Shutdown(ctx)
	obs, err := telemetry.New(telemetry.WithMeterProvider(exp.MeterProvider()), telemetry.WithoutTracing())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := work.New(work.WithObserver(obs))
	defer s.Close(ctx)
	owner := work.NewOwner("coordinator")
	ref, err := s.Start(ctx, work.Spec{Owner: owner, Target: work.Target{Label: "researcher", Kind: work.KindAgent},
		Run: func(context.Context) (string, error) { return "findings", nil }})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, _ = s.Result(ctx, owner, ref.ID, 30*time.Second)

	// In an application: http.Handle("/metrics", exp.Handler()).
	rec := httptest.NewRecorder()
	exp.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "agentwork_work_transitions_total") ||
			strings.HasPrefix(line, "agentwork_work_items{state=\"completed\"") {
			fmt.Println(line)
		}
	}
	// Output:
	// agentwork_work_items{state="completed",target="researcher"} 1
	// agentwork_work_transitions_total{state="completed",target="researcher"} 1
	// agentwork_work_transitions_total{state="queued",target="researcher"} 1
	// agentwork_work_transitions_total{state="running",target="researcher"} 1
}
