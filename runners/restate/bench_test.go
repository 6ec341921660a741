package restate_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	restatesdk "github.com/restatedev/sdk-go"
	sdkserver "github.com/restatedev/sdk-go/server"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
)

type bareEcho struct{}

func (bareEcho) Echo(_ restatesdk.Context, in string) (string, error) { return in, nil }

// BenchmarkBare is a bare Restate invocation on the same server: one
// call of an SDK service through the ingress, answered by its handler.
func BenchmarkBare(b *testing.B) {
	s := server(b)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sdkserver.NewRestate().Bind(restatesdk.Reflect(bareEcho{})).Start(ctx, addr) }()
	defer func() { cancel(); <-done }()
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	if err := s.Register(rctx, "http://"+addr); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Post(s.Ingress+"/bareEcho/Echo", "application/json", strings.NewReader(`"x"`))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(err, resp)
		}
		_ = resp.Body.Close()
	}
}

func benchEngine(b *testing.B) *restate.Engine {
	return deploy(b, map[string]restate.Child{"echo": {Kind: work.KindFunction,
		Run: func(_ context.Context, in string) (string, error) { return in, nil }}}, restate.WithLimits(work.WithMaxOutstanding(0)))
}

func benchSpec(o work.Owner) work.Spec {
	return work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }}
}

// BenchmarkStartRef is start -> work.ref: the admission (the owner's
// registry records the Work, creates its control object and sends its
// workflow the start) until the Ref returns.
func BenchmarkStartRef(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		// An owner per start: a registry keeps at most its retention.
		if _, err := e.Start(ctx, benchSpec(work.NewOwner("bench-ref-"+newToken()))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartResult is start -> result: the admission, the child's
// attempt on the Worker and its settlement, until Result returns the
// output.
func BenchmarkStartResult(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		o := work.NewOwner("bench-res-" + newToken())
		ref, err := e.Start(ctx, benchSpec(o))
		if err != nil {
			b.Fatal(err)
		}
		for {
			st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
			if err != nil {
				b.Fatal(err)
			}
			if st.State.Terminal() {
				if out != "x" {
					b.Fatalf("%+v %q", st, out)
				}
				break
			}
		}
	}
}

// BenchmarkCancel is Cancel -> the running child's context done: the
// Cancel call, the stop promise's completion reaching the attempt's
// workflow handler, and the child's context cancelled.
func BenchmarkCancel(b *testing.B) {
	started := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	e := deploy(b, map[string]restate.Child{"wait": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- struct{}{}
		return "", ctx.Err()
	}}}, restate.WithLimits(work.WithMaxOutstanding(0)))
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		o := work.NewOwner("bench-cancel-" + newToken())
		spec := benchSpec(o)
		spec.Target.Label = "wait"
		ref, err := e.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		<-started
		b.StartTimer()
		t0 := time.Now()
		if _, err := e.Cancel(ctx, o, ref.ID); err != nil {
			b.Fatal(err)
		}
		<-ended
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/cancel")
}
