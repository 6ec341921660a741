package enginetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// broken wraps the in-process engine with one deliberate contract
// violation, so that TestSuiteCatchesBrokenEngines can show the suite fails
// on it.
type broken struct {
	driver.Forwarder
	defect string
	maxDur time.Duration // "job-deadline-late-answer": the deadline it keeps itself
}

func (b broken) List(ctx context.Context, o work.Owner) ([]work.Status, error) {
	l, err := b.Engine.List(ctx, o)
	if b.defect == "list-order" && len(l) > 1 {
		l[0], l[len(l)-1] = l[len(l)-1], l[0]
	}
	return l, err
}

func (b broken) Send(ctx context.Context, o work.Owner, id, cmd, msg string) (work.SendReceipt, error) {
	if b.defect == "send-not-idempotent" {
		cmd = ""
	}
	return b.Engine.Send(ctx, o, id, cmd, msg)
}

func (b broken) Cancel(ctx context.Context, o work.Owner, id string) (work.CancelReceipt, error) {
	r, err := b.Engine.Cancel(ctx, o, id)
	if b.defect == "cancel-terminal-accepted" && err == nil && r.State.Terminal() {
		r.Accepted = true
	}
	if b.defect == "cancel-state-late" && err == nil && r.State == work.StateCancelRequested {
		// The receipt reports the state read a little after the
		// decision, the Work's end when it settled meanwhile.
		if st, _, werr := b.Engine.Result(ctx, o, id, 200*time.Millisecond); werr == nil && st.State.Terminal() {
			r.State = st.State
		}
	}
	return r, err
}

func (b broken) Start(ctx context.Context, spec work.Spec) (work.Ref, error) {
	if b.defect == "start-ignores-call-id" {
		spec.CallID = ""
	}
	if b.defect == "no-approvals-runs-unapproved" {
		spec.NeedsApproval = false
	}
	if b.defect == "job-deadline-late-answer" && b.maxDur > 0 {
		if spec.Job != nil {
			spec.Job = lateAnswerJob(spec.Job, b.maxDur)
		} else {
			spec.Budget.MaxDuration = b.maxDur
		}
	}
	return b.Engine.Start(ctx, spec)
}

func (b broken) Rows(ctx context.Context, o work.Owner) ([]observe.Row, int, error) {
	rows, more, err := b.Forwarder.Rows(ctx, o)
	if b.defect == "rows-unlimited" {
		more = 0
	}
	return rows, more, err
}

// Pending answers errors.ErrUnsupported for an engine without approvals
// (which then must refuse a Spec that needs one).
func (b broken) Pending(ctx context.Context, o work.Owner) ([]work.ApprovalRequest, error) {
	if b.defect == "no-approvals-runs-unapproved" {
		return nil, errors.ErrUnsupported
	}
	return b.Engine.Pending(ctx, o)
}

type brokenHarness struct{ defect string }

func (h brokenHarness) NewEngine(t *testing.T, cfg enginetest.Config) *work.Engine {
	if h.defect == "repeat-terminal" {
		cfg.Observer = repeatTerminal{reporting{cfg.Observer}}
	}
	if h.defect == "guidance-limits-ignored" {
		cfg.MaxMessageBytes, cfg.MaxQueuedGuidance = 0, 0
	}
	if h.defect == "shutdown-unreported" {
		cfg.Observer = shutdownUnreported{cfg.Observer}
	}
	if h.defect == "progress-first" {
		cfg.Observer = progressFirst{reporting{cfg.Observer}}
	}
	if h.defect == "dropped-before-usage" {
		cfg.Observer = &droppedBeforeUsage{reporting: reporting{cfg.Observer}, held: map[string]heldEvent{}}
	}
	var maxDur time.Duration
	if h.defect == "job-deadline-late-answer" && cfg.MaxDuration > 0 {
		maxDur, cfg.MaxDuration = cfg.MaxDuration, -1 // Start gives children theirs; jobs keep their own
	}
	return driver.NewEngine(broken{driver.Forwarder{Engine: inProcess{}.NewEngine(t, cfg)}, h.defect, maxDur})
}

// lateAnswerJob is j with a deadline of its own, d from its Submit,
// checked as Temporal's Work workflow checked it before its version 1
// (runners/temporal/workflow_job.go): a poll that starts past it, but for
// the first, cancels the job and fails deadline_exceeded, while the first
// poll, and a poll that started in time, decide with their answer.
func lateAnswerJob(j *work.Job, d time.Duration) *work.Job {
	var mu sync.Mutex
	var deadline time.Time
	polls := 0
	nj := *j
	nj.Submit = func(ctx context.Context, key, input string) ([]byte, error) {
		mu.Lock()
		deadline = time.Now().Add(d)
		mu.Unlock()
		return j.Submit(ctx, key, input)
	}
	nj.Await = func(ctx context.Context, h []byte) (work.Poll, error) {
		mu.Lock()
		past := polls > 0 && !time.Now().Before(deadline)
		polls++
		mu.Unlock()
		if past {
			_ = j.Cancel(ctx, h)
			return work.Poll{State: work.PollFailed, Class: work.ClassDeadline}, nil
		}
		return j.Await(ctx, h)
	}
	return &nj
}

// repeatTerminal reports every terminal event twice.
// reporting wraps an Observer and keeps its ShutdownReported, which a
// wrapper that embeds observe.Observer alone hides: each broken Observer
// below breaks one rule only.
type reporting struct{ observe.Observer }

func (r reporting) ShutdownReported(ctx context.Context, rep observe.ShutdownReport) {
	if so, ok := r.Observer.(observe.ShutdownObserver); ok {
		so.ShutdownReported(ctx, rep)
	}
}

type repeatTerminal struct{ reporting }

func (r repeatTerminal) Event(ctx context.Context, e observe.Event) {
	r.Observer.Event(ctx, e)
	if e.To.Terminal() {
		r.Observer.Event(ctx, e)
	}
}

// shutdownUnreported hides the Observer's ShutdownReported: the engine
// returns its Shutdown report and hands it to nobody.
type shutdownUnreported struct{ observe.Observer }

// progressFirst reports a progress event ahead of every running event.
type progressFirst struct{ reporting }

func (p progressFirst) Event(ctx context.Context, e observe.Event) {
	if e.Type == observe.EventRunning {
		pe := e
		pe.Type, pe.From, pe.To = observe.EventProgress, "", ""
		p.Observer.Event(ctx, pe)
	}
	p.Observer.Event(ctx, e)
}

// droppedBeforeUsage reports a Work's guidance-dropped event ahead of the
// usage event the Engine reported before it: it holds each Work's usage event back until the Work's next
// event, and delivers that one first when it is guidance-dropped.
type droppedBeforeUsage struct {
	reporting
	mu   sync.Mutex
	held map[string]heldEvent // by WorkID
}

type heldEvent struct {
	ctx context.Context
	e   observe.Event
}

func (d *droppedBeforeUsage) Event(ctx context.Context, e observe.Event) {
	d.mu.Lock() // held while delivering: no other reordering
	defer d.mu.Unlock()
	if e.WorkID == "" {
		d.Observer.Event(ctx, e)
		return
	}
	h, ok := d.held[e.WorkID]
	delete(d.held, e.WorkID)
	switch {
	case e.Type == observe.EventUsage:
		if ok {
			d.Observer.Event(h.ctx, h.e)
		}
		d.held[e.WorkID] = heldEvent{ctx, e}
	case ok && e.Type == observe.EventGuidanceDropped:
		d.Observer.Event(ctx, e)
		d.Observer.Event(h.ctx, h.e)
	default:
		if ok {
			d.Observer.Event(h.ctx, h.e)
		}
		d.Observer.Event(ctx, e)
	}
}

func (h brokenHarness) Capabilities() enginetest.Capabilities {
	c := inProcess{}.Capabilities()
	if h.defect == "wrong-guarantees" {
		c.Durable = true
	}
	return c
}

// TestBrokenConformance runs the suite against a broken engine when
// AGENTWORK_BROKEN names a defect (only as TestSuiteCatchesBrokenEngines's
// subprocess); otherwise it does nothing.
func TestBrokenConformance(t *testing.T) {
	defect := os.Getenv("AGENTWORK_BROKEN")
	if defect == "" {
		return
	}
	enginetest.Run(t, brokenHarness{defect})
}

// TestSuiteCatchesBrokenEngines: the suite fails, in the expected subtest,
// for each deliberate contract violation.
func TestSuiteCatchesBrokenEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in subprocesses")
	}
	for defect, subtest := range map[string]string{
		"list-order":                   "ListOrder",
		"send-not-idempotent":          "GuidanceIdempotency",
		"cancel-terminal-accepted":     "CancelTerminal",
		"rows-unlimited":               "StatusRows",
		"wrong-guarantees":             "Lifecycle",
		"repeat-terminal":              "ObserverEvents",
		"cancel-state-late":            "CancelRacesCompletion",
		"progress-first":               "ProgressOrder",
		"shutdown-unreported":          "ShutdownReported",
		"dropped-before-usage":         "GuidanceDropped",
		"start-ignores-call-id":        "AutoBackgroundIdempotency",
		"guidance-limits-ignored":      "GuidanceLimits",
		"no-approvals-runs-unapproved": "Approval",
		"job-deadline-late-answer":     "JobDeadlineDecides",
	} {
		t.Run(defect, func(t *testing.T) {
			out := failsWith(t, "TestBrokenConformance", defect, "--- FAIL: TestBrokenConformance/"+subtest)
			// ShutdownReported fails for its own defect alone: the other
			// broken Observers keep ShutdownReported (reporting), so
			// that its failure there shows the case can fail.
			for _, m := range failedCase.FindAllStringSubmatch(out, -1) {
				if m[1] == "ShutdownReported" && defect != "shutdown-unreported" {
					t.Errorf("defect %s fails ShutdownReported too", defect)
				}
			}
		})
	}
}

// failedCase matches a failed case of TestBrokenConformance in its
// verbose output, the case's name its group.
var failedCase = regexp.MustCompile(`--- FAIL: TestBrokenConformance/([^/\s]+)`)

// failsWith runs test alone in a new process of this test binary, with
// AGENTWORK_BROKEN set to defect, and fails t unless that run fails and
// its verbose output, which it returns, holds want.
func failsWith(t *testing.T, test, defect, want string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), "AGENTWORK_BROKEN="+defect)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s passed with defect %s", test, defect)
	}
	if !strings.Contains(string(out), want) {
		t.Fatalf("%s with defect %s: no %q in:\n%s", test, defect, want, out)
	}
	return string(out)
}
