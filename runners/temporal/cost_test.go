package temporal_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// costRun is one run of the cost cases' children, keyed by its input.
type costRun struct {
	started chan struct{}
	release chan struct{} // guided: take the boundary now
	took    chan []string // guided: what the boundary took
	done    chan struct{} // hold: its context was done
}

var costRuns sync.Map // input -> *costRun

func newCostRun(t *testing.T, input string) *costRun {
	r := &costRun{started: make(chan struct{}), release: make(chan struct{}), took: make(chan []string, 1),
		done: make(chan struct{})}
	costRuns.Store(input, r)
	t.Cleanup(func() { costRuns.Delete(input) })
	return r
}

func loadCostRun(in string) *costRun {
	v, _ := costRuns.Load(in)
	return v.(*costRun)
}

var costChildren = map[string]temporal.Child{
	// echo returns its input: a trivial function child.
	"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	// guided waits until told, then takes one model-request boundary (the
	// guidance queued by then) and returns.
	"guided": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		r := loadCostRun(in)
		close(r.started)
		select {
		case <-r.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		ex, _ := work.ExecutionFrom(ctx)
		_, _ = boundary.BeginRequest(ex)
		got := boundary.Guidance(ex)
		r.took <- got
		return strconv.Itoa(len(got)), nil
	}},
	// turns takes three model-request boundaries, as an agent child that
	// asks its model three times, and returns how many messages they took.
	"turns": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		ex, _ := work.ExecutionFrom(ctx)
		n := 0
		for range 3 {
			if _, err := boundary.BeginRequest(ex); err != nil {
				return "", err
			}
			n += len(boundary.Guidance(ex))
		}
		return strconv.Itoa(n), nil
	}},
	// hold runs until its context is done.
	"hold": {Kind: work.KindAgent, Run: func(ctx context.Context, in string) (string, error) {
		r := loadCostRun(in)
		close(r.started)
		<-ctx.Done()
		close(r.done)
		return "", ctx.Err()
	}},
}

// costEnv is one deployment whose coordinator and worker clients count
// their calls: an Engine and a Worker on a fresh task queue (default
// heartbeat timeout and retention), and the bare workflow's workers.
type costEnv struct {
	t      *testing.T
	k      *costCounter
	eng    *work.Engine
	ec     client.Client // the Engine's client (a coordinator's)
	reader client.Client // uncounted, for the histories
	queue  string
}

func newCostEnv(t *testing.T, opts ...temporal.Option) *costEnv {
	t.Helper()
	reader := server(t)
	k := newCostCounter()
	ec, wc := dialShared(t, k.intercept), dialShared(t, k.intercept)
	eventQueues++
	queue := "cost-" + strconv.Itoa(eventQueues)
	opts = append([]temporal.Option{temporal.WithTaskQueue(queue), temporal.WithOptions(work.WithMaxStarts(0)),
		temporal.WithOptions(work.WithMaxOutstanding(1 << 20))}, opts...)
	w, err := temporal.NewWorker(wc, costChildren, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	t.Cleanup(w.Stop)
	echo := func(_ context.Context, in string) (string, error) { return in, nil }
	bw := worker.New(wc, queue+"-bare", worker.Options{})
	bw.RegisterWorkflowWithOptions(bareRemoteWorkflow, workflow.RegisterOptions{Name: "bare.remote"})
	rw := worker.New(wc, "bare.remote", worker.Options{})
	rw.RegisterActivityWithOptions(echo, activity.RegisterOptions{Name: "bare.echo"})
	for _, w := range []worker.Worker{bw, rw} {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	eng := temporal.New(ec, opts...)
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	return &costEnv{t: t, k: k, eng: eng, ec: ec, reader: reader, queue: queue}
}

func (env *costEnv) owner(name string) work.Owner {
	return work.NewOwner(name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36))
}

// result waits for Work id's terminal status and output, as a model reads
// it (work.MaxResultWait at a time).
func (env *costEnv) result(o work.Owner, id string) (work.Status, string) {
	env.t.Helper()
	for {
		st, out, err := env.eng.Result(env.t.Context(), o, id, work.MaxResultWait)
		if err != nil {
			env.t.Fatal(err)
		}
		if st.State.Terminal() {
			return st, out
		}
	}
}

func (env *costEnv) start(o work.Owner, label, in string) string {
	env.t.Helper()
	c := costChildren[label]
	ref, err := env.eng.Start(env.t.Context(), work.Spec{Owner: o, Target: work.Target{Label: label, Kind: c.Kind},
		Input: in, Run: func(ctx context.Context) (string, error) { return c.Run(ctx, in) }})
	if err != nil {
		env.t.Fatal(err)
	}
	return ref.ID
}

// measure runs one case (n Works, under owner o unless o is zero) with the
// calls counted, waits until holders guidance holders deleted themselves,
// and returns its cost per Work: the histories of its Works, of o's
// registry and of the holders, and the calls, divided by n.
func (env *costEnv) measure(n int, o work.Owner, holders int, run func() []string) *cost {
	env.t.Helper()
	env.k.begin()
	ids := run()
	deadline := time.Now().Add(time.Minute)
	for env.k.deletedCount() < holders {
		if time.Now().After(deadline) {
			env.t.Fatalf("%d of %d guidance holders deleted themselves", env.k.deletedCount(), holders)
		}
		time.Sleep(10 * time.Millisecond) // the holders delete themselves after the child's boundary
	}
	calls, rejects, deleted := env.k.end()
	c := newCost()
	w := 1 / float64(n)
	for _, id := range ids {
		kind := "work"
		if strings.HasPrefix(id, "bare") {
			kind = "bare"
		}
		c.add(kind, workflowHistory(env.t, env.reader, id), w)
	}
	if !o.IsZero() {
		c.add("owner registry", workflowHistory(env.t, env.reader, "agentwork-owner/"+o.ID()), w)
	}
	for _, evs := range deleted {
		c.add("guidance holder", evs, w)
	}
	c.addCalls(calls, rejects, w)
	env.t.Logf("calls %v", calls)
	return c
}

// TestCost measures, in one run, what a Work costs Temporal beside a bare
// workflow that runs one activity and is read once: billable actions (by
// Temporal Cloud's definition, see cost_count_test.go), history events and
// bytes, for a plain background Work launched, run and read (its owner's
// registry its own, and shared by ten Works), an agent Work whose child
// asks its model three times and is sent no guidance, one that takes two
// guidance messages, one cancelled while running, and one foreground call. Each
// case is the mean of AGENTWORK_COST rounds; it prints the "costrow"
// lines make bench-temporal tabulates.
func TestCost(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("AGENTWORK_COST"))
	if rounds <= 0 {
		t.Skip("set AGENTWORK_COST=N (rounds per case) to measure")
	}
	env := newCostEnv(t)
	// completes measures one Work of child label (input "x", its own
	// owner), read until it completes with output want.
	completes := func(label, want string) func(int) *cost {
		return func(int) *cost {
			o := env.owner(label)
			return env.measure(1, o, 0, func() []string {
				id := env.start(o, label, "x")
				if st, out := env.result(o, id); st.State != work.StateCompleted || out != want {
					t.Fatalf("%s: %s %q", label, st.State, out)
				}
				return []string{id}
			})
		}
	}
	cases := []struct {
		name string
		run  func(i int) *cost
	}{
		{"bare workflow, one activity, read once", func(i int) *cost {
			id := "bare-" + env.queue + "-" + strconv.Itoa(i)
			return env.measure(1, work.Owner{}, 0, func() []string {
				run, err := env.ec.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: env.queue + "-bare"}, "bare.remote", "x")
				if err != nil {
					t.Fatal(err)
				}
				var out string
				if err := run.Get(t.Context(), &out); err != nil || out != "x" {
					t.Fatalf("bare: %q, %v", out, err)
				}
				return []string{id}
			})
		}},
		{"plain Work, its own owner", completes("echo", "x")},
		{"plain Work, owner shared by 10", func(int) *cost {
			o := env.owner("shared")
			return env.measure(10, o, 0, func() []string {
				var ids []string
				for range 10 {
					ids = append(ids, env.start(o, "echo", "x"))
				}
				for _, id := range ids {
					if st, out := env.result(o, id); st.State != work.StateCompleted || out != "x" {
						t.Fatalf("shared: %s %q", st.State, out)
					}
				}
				return ids
			})
		}},
		{"agent Work, three model requests, no guidance", completes("turns", "0")},
		{"Work taking two guidance messages", func(i int) *cost {
			o := env.owner("guided")
			in := o.ID() + "-" + strconv.Itoa(i)
			r := newCostRun(t, in)
			return env.measure(1, o, 2, func() []string {
				id := env.start(o, "guided", in)
				<-r.started
				for j := range 2 {
					if _, err := env.eng.Send(t.Context(), o, id, "", "guidance "+strconv.Itoa(j)); err != nil {
						t.Fatal(err)
					}
				}
				close(r.release)
				if got := <-r.took; len(got) != 2 {
					t.Fatalf("the boundary took %d messages, want 2", len(got))
				}
				if st, out := env.result(o, id); st.State != work.StateCompleted || out != "2" {
					t.Fatalf("guided: %s %q", st.State, out)
				}
				return []string{id}
			})
		}},
		{"Work cancelled while running", func(i int) *cost {
			o := env.owner("cancelled")
			in := o.ID() + "-" + strconv.Itoa(i)
			r := newCostRun(t, in)
			return env.measure(1, o, 0, func() []string {
				id := env.start(o, "hold", in)
				<-r.started
				if _, err := env.eng.Cancel(t.Context(), o, id); err != nil {
					t.Fatal(err)
				}
				<-r.done
				if st, _ := env.result(o, id); st.State != work.StateCancelled {
					t.Fatalf("cancelled: %s", st.State)
				}
				return []string{id}
			})
		}},
		{"foreground call", func(int) *cost {
			o := env.owner("call")
			return env.measure(1, o, 0, func() []string {
				out, err := env.eng.Call(t.Context(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
					Input: "x", Run: func(context.Context) (string, error) { return "x", nil }})
				if err != nil || out != "x" {
					t.Fatalf("call: %q, %v", out, err)
				}
				return nil
			})
		}},
	}
	means := make([]*cost, len(cases))
	for i := range means {
		means[i] = newCost()
	}
	for r := range rounds { // interleaved: every case sees the same load
		for i, tc := range cases {
			c := tc.run(r)
			t.Logf("%s, round %d: %.4g actions (%s), %.4g events, %.4g bytes", tc.name, r, c.total(), c.breakdown(), c.events, c.bytes)
			means[i].merge(c, 1/float64(rounds))
		}
	}
	bare := means[0]
	for i, tc := range cases[1:] {
		m := means[i+1]
		goal := ""
		if strings.HasPrefix(tc.name, "plain") {
			goal = "<=2x"
		}
		t.Logf("%s, mean of %d: %s", tc.name, rounds, m.breakdown())
		costRow("actions per Work", tc.name, m.total(), bare.total(), goal)
	}
	for i, tc := range cases[1:] {
		costRow("history events per Work", tc.name, means[i+1].events, bare.events, "")
	}
	for i, tc := range cases[1:] {
		costRow("history bytes per Work", tc.name, means[i+1].bytes, bare.bytes, "")
	}
}

// merge adds w times c to m.
func (m *cost) merge(c *cost, w float64) {
	for k, v := range c.actions {
		m.actions[k] += w * v
	}
	for k, v := range c.byWF {
		m.byWF[k] += w * v
	}
	m.events += w * c.events
	m.bytes += w * c.bytes
}

// costRow prints one row of make bench-temporal's table (tab-separated:
// section, case, ours, bare, goal; cmd/costtable prints them).
func costRow(section, name string, ours, bare float64, goal string) {
	fmt.Printf("costrow\t%s\t%s\t%.4g\t%.4g\t%s\n", section, name, ours, bare, goal)
}
