package restate_test

import (
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"strconv"
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

func benchEngine(b *testing.B) *work.Engine {
	return deploy(b, map[string]restate.Child{"echo": {Kind: work.KindFunction,
		Run: func(_ context.Context, in string) (string, error) { return in, nil }}}, restate.WithOptions(work.WithMaxOutstanding(0)))
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
	}}}, restate.WithOptions(work.WithMaxOutstanding(0)))
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

// BenchmarkTrustOptions is start -> result (as BenchmarkStartResult, with
// a 1 KiB input the child echoes) with the trust options off and on, in
// one run: "plain" (the Worker checks no signature, content is stored as
// is), "signed" (the Worker checks the server's signature,
// WithIdentityKeys), "sealed" (WithContentKeys on the Engine and the
// Worker), "both". The shared server signs its requests in every case.
//
//	cd runners/restate && go test -run '^$' -bench BenchmarkTrustOptions -benchtime 100x -count 3 .
func BenchmarkTrustOptions(b *testing.B) {
	s := server(b)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		b.Fatal(err)
	}
	input := strings.Repeat("0123456789abcdef", 64)
	for _, tc := range []struct {
		name string
		opts []restate.Option
	}{
		{"plain", nil},
		{"signed", []restate.Option{restate.WithIdentityKeys(s.IdentityKey)}},
		{"sealed", []restate.Option{restate.WithContentKeys(key)}},
		{"both", []restate.Option{restate.WithIdentityKeys(s.IdentityKey), restate.WithContentKeys(key)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			opts := append([]restate.Option{restate.WithServicePrefix("b" + strconv.FormatInt(namespaces.Add(1), 10)),
				restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithRPCTimeout(time.Minute),
				restate.WithOptions(work.WithMaxOutstanding(0))}, tc.opts...)
			w, err := restate.NewWorker(map[string]restate.Child{"echo": {Kind: work.KindFunction,
				Run: func(_ context.Context, in string) (string, error) { return in, nil }}}, append(opts, restate.WithRegistry())...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			e := restate.New(opts...)
			defer func() { _ = e.Close(ctx) }()
			startResult := func() {
				o := work.NewOwner("bench-trust-" + newToken())
				spec := benchSpec(o)
				spec.Input = input
				ref, err := e.Start(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				for {
					st, out, err := e.Result(ctx, o, ref.ID, work.MaxResultWait)
					if err != nil {
						b.Fatal(err)
					}
					if st.State.Terminal() {
						if out != input {
							b.Fatalf("%+v %d bytes", st, len(out))
						}
						return
					}
				}
			}
			startResult() // the first invocation a deployment serves is slower
			b.ResetTimer()
			for b.Loop() {
				startResult()
			}
		})
	}
}
