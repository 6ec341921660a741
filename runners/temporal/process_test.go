package temporal_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/runners/temporal/internal/testcodec"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestMain turns the test binary into a worker process when
// AGENTWORK_WORKER names a Temporal frontend ("host:port namespace queue"):
// it runs the "slow" target under the test codec (testcodec.Env), says "started <work id>" on stdout when an
// attempt begins, and blocks until it is killed. Otherwise it runs the
// tests, stops the shared dev server and fails when goroutines remain
// (goleak).
func TestMain(m *testing.M) {
	if spec := os.Getenv("AGENTWORK_WORKER"); spec != "" {
		os.Exit(workerProcess(spec))
	}
	code := m.Run()
	stopShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func workerProcess(spec string) int {
	f := strings.Fields(spec)
	// Dialed with the test codec (its key from the parent test,
	// testcodec.Env), as the tests that start it dial theirs.
	dc := testcodec.Converter()
	c, err := client.Dial(client.Options{HostPort: f[0], Namespace: f[1], DataConverter: dc})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"slow": {Kind: work.KindAgent, Run: func(ctx context.Context, input string) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			fmt.Printf("started %s\n", ex.WorkID())
			<-ctx.Done()
			return "", ctx.Err()
		}},
		"talker": {Kind: work.KindFunction, Run: talkerFirst}, // updates_test.go
	}, temporal.WithTaskQueue(f[2]), temporal.WithHeartbeatTimeout(time.Second), temporal.WithDataConverter(dc))
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	select {}
}

// killedWorker starts a worker process for queue, starts one "slow" Work on
// eng, waits until the worker process runs it and SIGKILLs the process.
func killedWorker(t *testing.T, hostPort, ns, queue string, eng *work.Engine, o work.Owner) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTWORK_WORKER="+hostPort+" "+ns+" "+queue, testcodec.Env())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ref, err := eng.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "slow", Kind: work.KindAgent},
		Input: "x", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "started "+ref.ID {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return ref.ID
}

type outcome struct {
	State observe.State
	Class string
}

// TestWorkerLost: the attempt dies with its worker process (SIGKILL); the
// Work is not replayed and fails with class worker_lost. Every client is
// dialed with the test codec (internal/testcodec).
func TestWorkerLost(t *testing.T) {
	c, hostPort, ns, dc := codecServerWithAddr(t)
	queue := "lost"
	opts := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithHeartbeatTimeout(time.Second), temporal.WithDataConverter(dc)}
	wf, err := temporal.NewWorker(c, nil, opts...) // workflows only
	if err != nil || wf.Start() != nil {
		t.Fatal("workflow worker", err)
	}
	defer wf.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("lost-owner")
	id := killedWorker(t, hostPort, ns, queue, eng, o)
	var res outcome
	if err := c.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	if res.State != work.StateFailed || res.Class != work.ClassWorkerLost {
		t.Fatalf("outcome = %+v, want failed worker_lost", res)
	}
	st, err := eng.Status(t.Context(), o, id)
	if err != nil || st.State != work.StateFailed || st.Attempt != 1 {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

// TestRetryableWorkerLost: a retryable child's attempt that dies with its
// worker is run again on another worker; attempt counts it. Every client
// is dialed with the test codec (internal/testcodec).
func TestRetryableWorkerLost(t *testing.T) {
	c, hostPort, ns, dc := codecServerWithAddr(t)
	queue := "retry"
	opts := []temporal.Option{temporal.WithTaskQueue(queue), temporal.WithHeartbeatTimeout(time.Second),
		temporal.WithRetryable("slow"), temporal.WithDataConverter(dc)}
	wf, err := temporal.NewWorker(c, nil, opts...)
	if err != nil || wf.Start() != nil {
		t.Fatal("workflow worker", err)
	}
	defer wf.Stop()
	eng := temporal.New(c, opts...)
	defer eng.Close(context.Background())
	o := work.NewOwner("retry-owner")
	id := killedWorker(t, hostPort, ns, queue, eng, o)
	// A second worker takes the next attempt.
	w2, err := temporal.NewWorker(c, map[string]temporal.Child{
		"slow": {Kind: work.KindAgent, Run: func(context.Context, string) (string, error) { return "second attempt", nil }},
	}, opts...)
	if err != nil || w2.Start() != nil {
		t.Fatal("second worker", err)
	}
	defer w2.Stop()
	var st work.Status
	var out string
	for deadline := time.Now().Add(2 * time.Minute); ; {
		st, out, err = eng.Result(context.Background(), o, id, work.MaxResultWait)
		if err != nil {
			t.Fatal(err)
		}
		if st.State.Terminal() || time.Now().After(deadline) {
			break
		}
	}
	if st.State != work.StateCompleted || out != "second attempt" || st.Attempt != 2 {
		t.Fatalf("status %+v output %q, want completed by attempt 2", st, out)
	}
}
