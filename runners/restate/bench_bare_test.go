package restate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	restatesdk "github.com/restatedev/sdk-go"
	sdkserver "github.com/restatedev/sdk-go/server"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/runners/restate/restatetest"
	"github.com/agentwork/agentwork/work"
)

// bare is a Restate deployment of the baseline: a workflow service whose
// Run handler runs one journaled step (an echo), the shape of a Work's
// workflow without the runner's registry and control objects.
type bare struct {
	name    string // the workflow service
	ingress string
	hc      *http.Client
}

// startBare serves the bare workflow (named name) on a loopback port and
// registers it; the test's end stops it.
func startBare(tb testing.TB, s *restatetest.Server, name string) *bare {
	tb.Helper()
	wf := restatesdk.NewWorkflow(name).Handler("Run", restatesdk.NewWorkflowHandler(
		func(ctx restatesdk.WorkflowContext, in string) (string, error) {
			return restatesdk.Run(ctx, func(restatesdk.RunContext) (string, error) { return in, nil }, restatesdk.WithName("child"))
		}))
	h, err := sdkserver.NewRestate().WithLogger(slog.DiscardHandler, true).Bind(wf).Handler()
	if err != nil {
		tb.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	tb.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Register(ctx, "http://"+l.Addr().String()); err != nil {
		tb.Fatal(err)
	}
	return &bare{name: name, ingress: s.Ingress, hc: &http.Client{Timeout: time.Minute}}
}

// invoke calls the bare workflow keyed key through the ingress: its
// request-response call (the output awaited), or with send its /send
// (answered once Restate has accepted the invocation).
func (b *bare) invoke(tb testing.TB, key string, send bool) {
	u := b.ingress + "/" + b.name + "/" + key + "/Run"
	if send {
		u += "/send"
	}
	resp, err := b.hc.Post(u, "application/json", bytes.NewReader([]byte(`"x"`)))
	if err != nil {
		tb.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		tb.Fatalf("bare %s: %s %s", u, resp.Status, body)
	}
}

// deployRunner starts a Worker (with the registry) serving an echo
// target and an Engine in namespace ns on s; the test's end stops them.
func deployRunner(tb testing.TB, s *restatetest.Server, ns string, targets map[string]restate.Child, opts ...restate.Option) (*work.Engine, *restate.Worker) {
	tb.Helper()
	opts = append([]restate.Option{restate.WithServicePrefix(ns), restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin),
		restate.WithRPCTimeout(time.Minute), restate.WithOptions(work.WithMaxStarts(0)), restate.WithOptions(work.WithMaxOutstanding(1 << 20)),
		restate.WithOptions(work.WithRetention(16, 0))}, opts...)
	w, err := restate.NewWorker(targets, append(opts, restate.WithRegistry())...)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	e := restate.New(opts...)
	tb.Cleanup(func() {
		_ = e.Close(context.Background())
		w.Stop()
	})
	return e, w
}

var echoChild = restate.Child{Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }}

func echoSpec(o work.Owner) work.Spec {
	return work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "x", nil }}
}

// median of ds (ds is sorted in place).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkRestate measures, on one Restate server and in the same run,
// start -> work.Ref and start -> result through the runner beside a bare
// Restate workflow invocation with one journaled step: its ingress /send
// (answered once Restate accepted it) and its request-response call (the
// output awaited). Rounds are interleaved (bare, then runner), so that
// both see the same load; the figures are medians of the rounds, and
// runner/bare their ratio.
//
//	cd runners/restate && go test -run '^$' -bench BenchmarkRestate -benchtime 200x .
func BenchmarkRestate(b *testing.B) {
	s := server(b)
	ns := "bench" + strconv.FormatInt(namespaces.Add(1), 10)
	bw := startBare(b, s, ns+".Bare")
	eng, _ := deployRunner(b, s, ns, map[string]restate.Child{"echo": echoChild})
	o := work.NewOwner("bench-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	ctx := context.Background()
	key := 0
	runner := func(b *testing.B, wait bool) {
		ref, err := eng.Start(ctx, echoSpec(o))
		if err != nil {
			b.Fatal(err)
		}
		for wait {
			st, _, err := eng.Result(ctx, o, ref.ID, work.MaxResultWait)
			if err != nil {
				b.Fatal(err)
			}
			wait = !st.State.Terminal()
		}
	}
	for _, tc := range []struct {
		name string
		wait bool
	}{{"start", false}, {"result", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var bareD, runnerD []time.Duration
			for b.Loop() {
				key++
				t0 := time.Now()
				bw.invoke(b, fmt.Sprintf("k%d", key), !tc.wait)
				t1 := time.Now()
				runner(b, tc.wait)
				runnerD = append(runnerD, time.Since(t1))
				bareD = append(bareD, t1.Sub(t0))
			}
			mb, mr := median(bareD), median(runnerD)
			b.ReportMetric(float64(mb.Microseconds()), "bare-med-us")
			b.ReportMetric(float64(mr.Microseconds()), "runner-med-us")
			b.ReportMetric(float64(mr)/float64(mb), "runner/bare")
		})
	}
}
