package temporal_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentwork/agentwork/runners/temporal"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// waitHook is a client whose GetWorkflow tells when it is first called:
// Engine.Result has read the registry and begins its wait.
type waitHook struct {
	client.Client
	once    sync.Once
	waiting chan struct{}
}

func (h *waitHook) GetWorkflow(ctx context.Context, id, runID string) client.WorkflowRun {
	h.once.Do(func() { close(h.waiting) })
	return h.Client.GetWorkflow(ctx, id, runID)
}

// TestResultHiddenWhileAwaited: a Work that its owner detaches, or
// releases, while a Result waits for it is not_found when the wait ends,
// as in-process (the wait's outcome never answers for a Work its owner
// no longer sees).
func TestResultHiddenWhileAwaited(t *testing.T) {
	for _, hide := range []string{"detach", "release"} {
		t.Run(hide, func(t *testing.T) {
			c := server(t)
			release := make(chan struct{})
			targets := map[string]temporal.Child{"held": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
				select {
				case <-release:
					return "the output", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}}}
			_, queue := deploy(t, "hidden-"+hide, targets, nil, nil)
			hook := &waitHook{Client: c, waiting: make(chan struct{})}
			e := temporal.New(hook, temporal.WithTaskQueue(queue))
			defer e.Close(context.Background())
			o := work.NewOwner(queue) // one per run: -count=N repeats on one server
			ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "held", Kind: work.KindFunction},
				Run: func(context.Context) (string, error) { return "", nil }})
			if err != nil {
				t.Fatal(err)
			}
			type answer struct {
				st  work.Status
				out string
				err error
			}
			got := make(chan answer, 1)
			go func() {
				st, out, err := e.Result(context.Background(), o, ref.ID, work.MaxResultWait)
				got <- answer{st, out, err}
			}()
			<-hook.waiting
			switch hide {
			case "detach":
				if _, err := e.Detach(t.Context(), o, ref.ID); err != nil {
					t.Fatal(err)
				}
				close(release)
			case "release":
				if err := e.Release(t.Context(), o); err != nil {
					t.Fatal(err)
				}
			}
			a := <-got
			if !errors.Is(a.err, work.ErrNotFound) || a.out != "" {
				t.Fatalf("Result after %s while awaited = %s %q %v, want not_found", hide, a.st.State, a.out, a.err)
			}
		})
	}
}

// failAfterSignal fails the workflow task in which a Work's workflow
// first sends a transition to state to its owner's registry, after the
// update is applied there: the server refuses the task's completion (as
// it does a task whose worker died once its update registry was cleared,
// a shard moved or a history host restarted: the task's updates are not
// delivered again). hook runs in between, outside the workflow.
type failAfterSignal struct {
	interceptor.InterceptorBase
	state observe.State // the transition whose task fails
	armed atomic.Bool
	hook  func(ctx context.Context) error
}

func (f *failAfterSignal) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &failInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type failInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	f *failAfterSignal
}

func (i *failInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&failOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, f: i.f})
}

type failOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *failAfterSignal
}

func (o *failOutbound) ExecuteLocalActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	fut := o.Next.ExecuteLocalActivity(ctx, typ, args...)
	if typ != temporal.TellOwnerName || len(args) != 3 || args[1] != "record" ||
		temporal.RecordState(args[2]) != o.f.state || workflow.IsReplaying(ctx) || !o.f.armed.CompareAndSwap(true, false) {
		return fut
	}
	if err := fut.Get(ctx, nil); err != nil {
		return fut
	}
	if o.f.hook != nil {
		_ = workflow.ExecuteLocalActivity(ctx, o.f.hook).Get(ctx, nil)
	}
	// A command the server refuses: it fails the task as it completes,
	// with what the task decided (the cancel update included: its caller
	// is told the update failed).
	bad := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: strings.Repeat("q", 2000), StartToCloseTimeout: time.Minute})
	workflow.ExecuteActivity(bad, "refused")
	return fut
}

// TestTransitionFromLostTask: a workflow task that sent a record to
// the owner's registry and then was lost (its worker died before
// completing it) is run again and may decide otherwise (here the child
// completed meanwhile, and the completion is applied before the cancel):
// the registry applies what the task that counts decided, so the Work
// ends there, never stuck in the lost task's cancel-requested.
func TestTransitionFromLostTask(t *testing.T) {
	base := server(t)
	release := make(chan struct{})
	inj := &failAfterSignal{state: work.StateCancelRequested}
	inj.armed.Store(true)
	inj.hook = func(ctx context.Context) error {
		// The child completes while the task is in flight: its completion
		// comes in the task that runs again.
		close(release)
		id := activity.GetInfo(ctx).WorkflowExecution.ID
		for {
			d, err := base.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				return err
			}
			if len(d.GetPendingActivities()) == 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	c, err := client.NewClientFromExisting(base, client.Options{Namespace: namespace(), Interceptors: []interceptor.ClientInterceptor{inj}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := []temporal.Option{temporal.WithTaskQueue("lost-task"), temporal.WithHeartbeatTimeout(5 * time.Second),
		temporal.WithRPCTimeout(time.Minute)}
	w, err := temporal.NewWorker(c, map[string]temporal.Child{
		"held": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			<-release // it never hears of the cancel: the task that asked for it was lost
			return "the output", nil
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	e := temporal.New(base, opts...)
	defer e.Close(context.Background())
	o := work.NewOwner("lost-task")
	ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "held", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, err := e.Status(t.Context(), o, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == work.StateRunning {
			break
		}
		runtime.Gosched()
	}
	cancelled := make(chan error, 1)
	go func() {
		_, err := e.Cancel(t.Context(), o, ref.ID)
		cancelled <- err
	}()
	if err := base.GetWorkflow(context.Background(), ref.ID, "").Get(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	<-cancelled
	if inj.armed.Load() {
		t.Fatal("no workflow task was lost")
	}
	// The Work's workflow closed once its registry had its last record.
	st, err := e.Status(t.Context(), o, ref.ID)
	if err != nil || !st.State.Terminal() {
		t.Fatalf("Status after the Work ended = %s, %v; want terminal", st.State, err)
	}
}

// TestStartedSignalRetried: the attempt's worker tells the owner's
// registry that the Work runs; when that update fails (the frontend
// unreachable for a while), it tries again while the child runs, so the
// registry never shows a running Work queued until it ends.
func TestStartedSignalRetried(t *testing.T) {
	var failed atomic.Int64
	refuse := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest); ok && r.GetRequest().GetInput().GetName() == "record" &&
			strings.Contains(r.GetRequest().GetInput().GetArgs().String(), `\"State\":\"running\"`) && failed.Add(1) <= 3 {
			return status.Error(codes.PermissionDenied, "injected: the registry cannot be reached")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	wc := dialShared(t, refuse)
	release := make(chan struct{})
	opts := []temporal.Option{temporal.WithTaskQueue("started-retried"), temporal.WithHeartbeatTimeout(5 * time.Second),
		temporal.WithRPCTimeout(time.Minute)}
	w, err := temporal.NewWorker(wc, map[string]temporal.Child{
		"held": {Kind: work.KindFunction, Run: func(ctx context.Context, _ string) (string, error) {
			<-release
			return "the output", nil
		}},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	defer close(release)
	e := temporal.New(server(t), opts...)
	defer e.Close(context.Background())
	o := work.NewOwner("started-retried")
	ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "held", Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	// Bounded: without the retries the registry says queued until the
	// child ends, which it does only after this loop.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.Status(t.Context(), o, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == work.StateRunning && !st.StartedAt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry still says %s while the child runs (%d started signals refused)", st.State, failed.Load())
		}
		runtime.Gosched()
	}
	if failed.Load() < 3 {
		t.Fatalf("%d started signals refused, want 3", failed.Load())
	}
}

// TestTerminalFromLostTask: a Work cancelled while queued in a workflow
// task that is then lost, with the cancel (the server refused the task's
// completion and failed the update), runs after all: the owner's registry,
// told cancelled by the lost task, follows the Work to its real end (a
// terminal record is not final against a later revision).
func TestTerminalFromLostTask(t *testing.T) {
	base := server(t)
	inj := &failAfterSignal{state: work.StateCancelled}
	inj.armed.Store(true)
	c, err := client.NewClientFromExisting(base, client.Options{Namespace: namespace(), Interceptors: []interceptor.ClientInterceptor{inj}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queues.Add(1)
	opts := []temporal.Option{temporal.WithTaskQueue("lost-terminal-" + strconv.FormatInt(queues.Load(), 10)),
		temporal.WithHeartbeatTimeout(5 * time.Second), temporal.WithRPCTimeout(time.Minute)}
	// Workflows only: the Work stays queued until the target's worker
	// starts.
	wf, err := temporal.NewWorker(c, nil, opts...)
	if err != nil || wf.Start() != nil {
		t.Fatal("worker", err)
	}
	defer wf.Stop()
	e := temporal.New(base, opts...)
	defer e.Close(context.Background())
	o := work.NewOwner("lost-terminal-" + strconv.FormatInt(queues.Load(), 10))
	ref, err := e.Start(context.Background(), work.Spec{Owner: o, Target: work.Target{Label: "echo", Kind: work.KindFunction},
		Input: "ran after all", Run: func(context.Context) (string, error) { return "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := e.Cancel(t.Context(), o, ref.ID)
	if inj.armed.Load() {
		t.Fatal("no workflow task was lost")
	}
	if cerr == nil {
		// The server delivered the lost task's update again, in the task
		// that ran next (Temporal server 1.29, the CLI dev server's:
		// 1.32 fails the update with the task): the cancel holds.
		if st, _, err := e.Result(t.Context(), o, ref.ID, work.MaxResultWait); err != nil || st.State != work.StateCancelled {
			t.Fatalf("Result after an accepted cancel of queued Work = %s %v; want cancelled", st.State, err)
		}
		t.Skip("this server delivers a lost task's update again: no cancel is lost")
	}
	w, err := temporal.NewWorker(base, map[string]temporal.Child{
		"echo": {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
	}, opts...)
	if err != nil || w.Start() != nil {
		t.Fatal("worker", err)
	}
	defer w.Stop()
	var out workOutput
	if err := base.GetWorkflow(context.Background(), ref.ID, "").Get(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if out.State != work.StateCompleted {
		t.Fatalf("the Work ended %s, want completed (its cancel was lost)", out.State)
	}
	st, res, err := e.Result(context.Background(), o, ref.ID, 0)
	if err != nil || st.State != work.StateCompleted || res != "ran after all" {
		t.Fatalf("Result after the Work ended = %s %q %v; want completed and its output", st.State, res, err)
	}
}

// workOutput is the part of a Work workflow's result a test reads.
type workOutput struct {
	State observe.State
}
