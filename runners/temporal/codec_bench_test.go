package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/runners/temporal/testserver"
	"github.com/agentwork/agentwork/work"
)

// BenchmarkCodec is start -> result (a 1 KiB input the child echoes)
// through the runner with its client, Engine and Worker on the SDK's
// default converter ("plain") and under the test encryption codec
// (AES-256-GCM, internal/testcodec; "codec"), interleaved round by round on
// one dev server so that both see the same load: the medians and their
// ratio are the codec's cost.
//
//	cd runners/temporal && go test -run '^$' -bench BenchmarkCodec -benchtime 60x -count 3 .
func BenchmarkCodec(b *testing.B) {
	srv, err := testserver.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Stop)
	input := strings.Repeat("0123456789abcdef", 64)
	ctx := context.Background()
	arm := func(name string, dc converter.DataConverter) func() {
		c, err := client.Dial(client.Options{HostPort: srv.HostPort, Namespace: testserver.Namespace, DataConverter: dc, Logger: quietLogger()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		opts := []temporal.Option{temporal.WithTaskQueue("codec-bench-" + name), temporal.WithDataConverter(dc),
			temporal.WithOptions(work.WithMaxStarts(0)), temporal.WithOptions(work.WithMaxOutstanding(1 << 20)),
			temporal.WithOptions(work.WithRetention(16, 0))}
		w, err := temporal.NewWorker(c, map[string]temporal.Child{"echo": {Kind: work.KindFunction,
			Run: func(_ context.Context, in string) (string, error) { return in, nil }}}, opts...)
		if err != nil || w.Start() != nil {
			b.Fatal("worker", err)
		}
		b.Cleanup(w.Stop)
		eng := temporal.New(c, opts...)
		b.Cleanup(func() { _ = eng.Close(ctx) })
		o := work.NewOwner("codec-bench-" + name)
		spec := work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction}, Input: input,
			Run: func(context.Context) (string, error) { return "", nil }}
		return func() {
			ref, err := eng.Start(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			for {
				st, out, err := eng.Result(ctx, o, ref.ID, work.MaxResultWait)
				if err != nil {
					b.Fatal(err)
				}
				if st.State.Terminal() {
					if out != input {
						b.Fatalf("%s: %+v, %d bytes", name, st, len(out))
					}
					return
				}
			}
		}
	}
	plain, sealed := arm("plain", converter.GetDefaultDataConverter()), arm("codec", testcodec.Converter())
	plain() // each deployment's first Work is slower
	sealed()
	var tp, tc []time.Duration
	for b.Loop() {
		t0 := time.Now()
		plain()
		t1 := time.Now()
		sealed()
		tc = append(tc, time.Since(t1))
		tp = append(tp, t1.Sub(t0))
	}
	mp, mc := median(tp), median(tc)
	b.ReportMetric(float64(mp.Microseconds()), "plain-us/op")
	b.ReportMetric(float64(mc.Microseconds()), "codec-us/op")
	b.ReportMetric(float64(mc)/float64(mp), "codec/plain")
}
