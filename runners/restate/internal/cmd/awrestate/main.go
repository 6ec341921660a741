// Command awrestate is the multi-process harness of the Restate runner:
// service and coordinator processes for make integration-restate, and the
// demo of make demo-restate. It lives in the runner's module, so that the
// root module never imports Restate.
//
//	awrestate service     -ingress URL -admin URL -name N -spans FILE [-registry] [-listen ADDR -advertise URL]
//	awrestate coordinator -ingress URL -owner O -spans FILE
//	awrestate demo
//	awrestate server-binary
//
// A service process is a restate.Worker: with -registry it serves the
// owners' and the Works' objects (one such process per deployment, at its
// own URL); without, it serves six targets (harness.Children: slow, retry, gated,
// deaf, stubborn, fail), listening on -listen and registered as -advertise (the
// load balancer in front of several service processes). It says "started
// <work id> <name>" on stdout when an attempt begins; its log lines
// (stderr) carry ids and states only. A coordinator reads one command a
// line on stdin (start LABEL INPUT, held LABEL INPUT, pending, approve
// ID, status ID, result ID, cancel ID, send ID CALL MESSAGE, list) and
// answers each with one JSON line on stdout:
// the object the model would see, or {"error":CODE}. Every process
// records the spans of its agentwork telemetry Observer in -spans (one
// line per span: name, attributes, events, status), for the canary
// check. server-binary prints the Restate server binary's path,
// installing it once (restatetest.Binary).
//
// The balancer runs in the driving process (the integration test or the
// demo); with AWRESTATE_DEBUG set it logs each request's path and backend
// to that process's stderr. AWRESTATE_LOGS names a directory that keeps
// the integration test's logs, span files and the server's log.
package main

import (
	"fmt"
	"os"

	"github.com/agentwork/agentwork/runners/restate/restatetest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: awrestate service|coordinator|demo|server-binary [flags]")
		os.Exit(2)
	}
	var code int
	switch os.Args[1] {
	case "service":
		code = serviceMain(os.Args[2:])
	case "coordinator":
		code = coordinatorMain(os.Args[2:])
	case "demo":
		code = demoMain(os.Args[2:])
	case "server-binary":
		bin, err := restatetest.Binary()
		if err != nil {
			fmt.Fprintln(os.Stderr, "awrestate:", err)
			code = 1
		} else {
			fmt.Println(bin)
		}
	default:
		fmt.Fprintf(os.Stderr, "awrestate: unknown command %q\n", os.Args[1])
		code = 2
	}
	os.Exit(code)
}
