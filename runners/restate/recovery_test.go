package restate_test

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/runners/restate"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestWorkerLost stops the Worker running a child mid-run and starts
// another at its address: Restate retries the attempt there, which finds
// the first one started and never finished. A target that is not
// retryable ends failed, class worker_lost, attempt 1; a retryable one
// runs again and completes, attempt 2.
func TestWorkerLost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retryable bool
		state     observe.State
		class     string
		attempt   int
		runs      int32
	}{
		{"lost", false, work.StateFailed, work.ClassWorkerLost, 1, 1},
		{"retried", true, work.StateCompleted, "", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server(t)
			var runs atomic.Int32
			started := make(chan struct{}, 2)
			child := restate.Child{Kind: work.KindFunction, Run: func(ctx context.Context, in string) (string, error) {
				if runs.Add(1) > 1 {
					return "second " + in, nil
				}
				started <- struct{}{}
				<-ctx.Done() // cut off with its Worker
				return "", ctx.Err()
			}}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			_ = l.Close()
			opts := []restate.Option{restate.WithServicePrefix("lost" + strconv.FormatInt(namespaces.Add(1), 10)),
				restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithListenAddress(addr),
				restate.WithRegistry(), restate.WithRPCTimeout(time.Minute)}
			if tc.retryable {
				opts = append(opts, restate.WithRetryable("slow"))
			}
			targets := map[string]restate.Child{"slow": child}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			w1, err := restate.NewWorker(targets, opts...)
			if err != nil || w1.Start(ctx) != nil {
				t.Fatal("first worker", err)
			}
			e := restate.New(opts...)
			defer func() { _ = e.Close(context.Background()) }()
			o := work.NewOwner("lost-" + tc.name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36))
			ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "slow", Kind: work.KindFunction}, Input: "x",
				Run: func(context.Context) (string, error) { return "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatal("the child did not start")
			}
			w1.Stop()
			w2, err := restate.NewWorker(targets, opts...)
			if err != nil || w2.Start(ctx) != nil {
				t.Fatal("second worker", err)
			}
			defer w2.Stop()
			var st work.Status
			var out string
			for st.State == "" || !st.State.Terminal() {
				if st, out, err = e.Result(ctx, o, ref.ID, work.MaxResultWait); err != nil {
					t.Fatal(err)
				}
				if ctx.Err() != nil {
					t.Fatalf("not settled: %+v", st)
				}
			}
			if st.State != tc.state || st.Class != tc.class || st.Attempt != tc.attempt || runs.Load() != tc.runs {
				t.Fatalf("status %+v after %d runs; want %s, class %q, attempt %d after %d runs",
					st, runs.Load(), tc.state, tc.class, tc.attempt, tc.runs)
			}
			if tc.state == work.StateCompleted && out != "second x" {
				t.Fatalf("output %q; want %q", out, "second x")
			}
		})
	}
}

// TestWorkerSnapshot: a Worker's Snapshot shows the attempt it runs on
// its target's slot, cancel-requested once the cancel reached it, and
// nothing once the child returned.
func TestWorkerSnapshot(t *testing.T) {
	s := server(t)
	started, ended := make(chan struct{}), make(chan struct{})
	opts := []restate.Option{restate.WithServicePrefix("snap" + strconv.FormatInt(namespaces.Add(1), 10)),
		restate.WithIngress(s.Ingress), restate.WithAdmin(s.Admin), restate.WithOptions(work.WithMaxRunning(3)), restate.WithRegistry()}
	w, err := restate.NewWorker(map[string]restate.Child{"c": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return "", ctx.Err()
	}}}, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err != nil || w.Start(ctx) != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := restate.New(opts...)
	defer func() { _ = e.Close(context.Background()) }()
	o := work.NewOwner("snap-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	ref, err := e.Start(ctx, work.Spec{Owner: o, Target: work.Target{Label: "c", Kind: work.KindFunction}, Input: "x",
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	snap, _ := w.Snapshot(ctx)
	if snap.SlotsInUse != 1 || len(snap.Counts) != 1 || snap.Counts[0].MaxRunning != 3 || len(snap.Live) != 1 ||
		snap.Live[0].ID != ref.ID || snap.Live[0].State != work.StateRunning || snap.Live[0].Attempt != 1 {
		t.Fatalf("running: %+v", snap)
	}
	if _, err := e.Cancel(ctx, o, ref.ID); err != nil {
		t.Fatal(err)
	}
	<-ended
	for {
		snap, _ = w.Snapshot(ctx)
		if snap.SlotsInUse == 0 {
			break
		}
		if len(snap.Live) != 1 || snap.Live[0].State != work.StateCancelRequested || snap.Live[0].CancelAt.IsZero() {
			t.Fatalf("cancelled, finishing: %+v", snap)
		}
		if ctx.Err() != nil {
			t.Fatal("the slot was never freed")
		}
		time.Sleep(5 * time.Millisecond) // polling another goroutine's release of the slot
	}
	if len(snap.Live) != 0 || snap.Counts[0].SlotsInUse != 0 {
		t.Fatalf("after the child returned: %+v", snap)
	}
}
