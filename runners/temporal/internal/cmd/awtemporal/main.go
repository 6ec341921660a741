// Command awtemporal is the multi-process harness of the Temporal runner:
// worker and coordinator processes for make integration-temporal, and the
// demo of make demo-temporal. It lives in the runner's module, so that the
// root module never imports Temporal.
//
//	awtemporal worker      -hostport H -queue Q -name N -spans FILE [-jobs URL] [-bare]
//	awtemporal coordinator -hostport H -queue Q -owner O -spans FILE
//	awtemporal demo
//	awtemporal temporal-cli
//
// A worker runs the runner's workflows and its targets (slow, retry,
// gated, deaf, stubborn, fail: harness.Children; echo), with -bare the scale run's bare Temporal
// workflow and activity (scale.go), and with -jobs URL a job target,
// batch, at the fake batch service at URL; it says "started <work id> <worker name>" on stdout when
// an attempt begins and "polled <work id> <worker name>" at each poll of a
// job; its log lines (stderr) carry ids and states only. A coordinator
// reads one command a line on stdin (start LABEL INPUT, job INPUT, held
// LABEL INPUT, pending, approve ID, status ID, result ID, cancel ID, send
// ID CALL MESSAGE, list) and answers each
// with one JSON line on stdout: the object the model would see, or
// {"error":CODE}. Both record the spans of the Temporal SDK's
// OpenTelemetry interceptor in -spans (one line per span: name,
// attributes, events, status), for the canary check. The demo's dev
// server, as every test's, is testserver's; temporal-cli prints the path
// of the Temporal CLI it runs (testserver.Binary: AGENTWORK_TEMPORAL_CLI,
// else built once into the repository's .cache; run it in the
// repository), for the scripts that run the CLI themselves.
package main

import (
	"fmt"
	"os"

	"github.com/agentwork/agentwork/runners/temporal/testserver"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: awtemporal worker|coordinator|demo|temporal-cli [flags]")
		os.Exit(2)
	}
	var code int
	switch os.Args[1] {
	case "worker":
		code = workerMain(os.Args[2:])
	case "coordinator":
		code = coordinatorMain(os.Args[2:])
	case "demo":
		code = demoMain(os.Args[2:])
	case "temporal-cli":
		bin, err := testserver.Binary()
		if err != nil {
			fmt.Fprintln(os.Stderr, "awtemporal:", err)
			code = 1
		} else {
			fmt.Println(bin)
		}
	default:
		fmt.Fprintf(os.Stderr, "awtemporal: unknown command %q\n", os.Args[1])
		code = 2
	}
	os.Exit(code)
}
