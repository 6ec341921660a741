package middleware_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
)

// specSpy is an engine that records the Specs the middleware starts and
// calls, and refuses them (the test looks only at what was asked).
type specSpy struct {
	driver.Forwarder
	mu    sync.Mutex
	specs []work.Spec
}

var errSpy = errors.New("spy: not started")

func (s *specSpy) Start(_ context.Context, spec work.Spec) (work.Ref, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs = append(s.specs, spec)
	return work.Ref{}, errSpy
}

func (s *specSpy) Call(_ context.Context, spec work.Spec) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs = append(s.specs, spec)
	return "", errSpy
}

func (s *specSpy) recorded() []work.Spec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]work.Spec(nil), s.specs...)
}

func testJob() *work.Job {
	return &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte("h"), nil },
		Await:  func(context.Context, []byte) (work.Poll, error) { return work.Poll{State: work.PollDone}, nil },
	}
}

// TestWaitingChildrenPrepare: what Prepare refuses of a job child or a
// child that needs approval.
func TestWaitingChildrenPrepare(t *testing.T) {
	fn := func(context.Context, string) (string, error) { return "", nil }
	tests := []struct {
		name  string
		entry any
		want  error // nil: Prepare succeeds
	}{
		{"job without Run", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Job: testJob()}), nil},
		{"foreground job", middleware.Child{Kind: work.KindFunction, Job: testJob()}, nil},
		{"job on an agent child", middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Job: testJob()}), middleware.ErrInvalidChild},
		{"job without Await", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Job: &work.Job{Submit: testJob().Submit}}), middleware.ErrInvalidChild},
		{"job with a negative bound", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Job: &work.Job{Submit: testJob().Submit, Await: testJob().Await, MaxPolls: -1}}), middleware.ErrInvalidChild},
		{"approval, backgroundable", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: fn, NeedsApproval: true, ApprovalTimeout: time.Hour}), nil},
		{"approval, foreground only", middleware.Child{Kind: work.KindFunction, Run: fn, NeedsApproval: true}, middleware.ErrInvalidChild},
		{"negative approval timeout", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: fn, NeedsApproval: true, ApprovalTimeout: -time.Second}), middleware.ErrNegativeLimit},
		{"neither Run nor Job", middleware.Backgroundable(middleware.Child{Kind: work.KindFunction}), middleware.ErrInvalidChild},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := middleware.Prepare(e.sup, work.NewOwner("o"), map[string]any{"child": tt.entry})
			if tt.want == nil && err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Prepare: %v, want %v", err, tt.want)
			}
		})
	}
}

// TestWaitingChildrenSpec: a launch carries the Job, NeedsApproval and
// ApprovalTimeout and the input the approver reads; a foreground call of
// a job carries the Job; a foreground call of a child that needs approval
// is refused before any Work is asked for.
func TestWaitingChildrenSpec(t *testing.T) {
	e := newEnv(t)
	spy := &specSpy{Forwarder: driver.Forwarder{Engine: e.sup}}
	job := testJob()
	s, err := middleware.Prepare(driver.NewEngine(spy), work.NewOwner("o"), map[string]any{
		"job":      middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Job: job}),
		"approved": middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: func(context.Context, string) (string, error) { return "", nil }, NeedsApproval: true, ApprovalTimeout: time.Hour}),
	})
	if err != nil {
		t.Fatal(err)
	}
	call(t, tool(t, s, "job"), `{"input":"batch 1","run_in_background":true}`)
	call(t, tool(t, s, "job"), `{"input":"batch 2"}`)
	call(t, tool(t, s, "approved"), `{"input":"deploy","run_in_background":true}`)
	specs := spy.recorded()
	if len(specs) != 3 {
		t.Fatalf("the engine was asked %d times, want 3", len(specs))
	}
	for i, want := range []struct {
		input    string
		job      bool
		approval bool
	}{{"batch 1", true, false}, {"batch 2", true, false}, {"deploy", false, true}} {
		sp := specs[i]
		if sp.Input != want.input || (sp.Job == job) != want.job || sp.NeedsApproval != want.approval {
			t.Errorf("spec %d: Input %q, Job set %v, NeedsApproval %v; want %q, %v, %v", i, sp.Input, sp.Job != nil, sp.NeedsApproval, want.input, want.job, want.approval)
		}
		if want.job && sp.Run != nil {
			t.Errorf("spec %d: a job's Spec has a Run", i)
		}
		if want.approval && sp.ApprovalTimeout != time.Hour {
			t.Errorf("spec %d: ApprovalTimeout %s, want 1h", i, sp.ApprovalTimeout)
		}
	}

	out := call(t, tool(t, s, "approved"), `{"input":"deploy"}`)
	if code := errorCode(t, out); code != middleware.CodeChildInput || !strings.Contains(out, "needs approval") {
		t.Errorf("foreground call of a child that needs approval = %s, want %s naming the approval", out, middleware.CodeChildInput)
	}
	if n := len(spy.recorded()); n != 3 {
		t.Errorf("the refused foreground call reached the engine (%d calls)", n)
	}
}
