// Package enginetest is the conformance suite of the work.Engine seam:
//
//	func TestConformance(t *testing.T) {
//		enginetest.Run(t, harness{}) // harness.NewEngine builds the engine under test from a Config
//	}
//
// is the whole test of an engine; one
// test that drives any implementation through the whole model-facing
// contract (lifecycle, owner isolation, limits, the result wait, cancel
// races, guidance order and idempotency, guidance dropped as a Work ends
// (after its usage, before its terminal event), launch idempotency, detach,
// release, status rows, foreground calls, approval before a child starts
// (for an Engine with approvals), budgets and pools,
// external jobs (submit once, polls, cancel, deadline), children that
// talk back (for an Engine with updates: updates in order
// and bounded, idempotent, owner-checked, readable after the end;
// questions answered by guidance or left unanswered), the middleware's
// opt-in auto-background option over the Engine (a call that moves to the
// background at its bound, one that completes in time, its limits and
// idempotency, the latency from the bound to the ref), and the Observer
// events: their order, one terminal event, no content). It follows the Go
// Cloud Development Kit's drivertest:
// an implementation supplies a Harness and calls Run from its own test.
//
//	func TestConformance(t *testing.T) { enginetest.Run(t, myHarness{}) }
//
// The suite's children (Children) are ordinary Go functions keyed by target
// label; an implementation that runs children in other processes registers
// them on its workers, which must live in the test's process (the suite
// steers its children through in-memory channels). Behaviour an
// implementation may legitimately choose (its guarantees, how attempts
// count) is a Capabilities value, checked like everything else, never a
// skipped test.
//
// The package imports only the standard library, work, work/observe and
// middleware (the auto-background option is written once there, over the
// Engine API).
package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// Harness makes Engines for the suite.
type Harness interface {
	// NewEngine returns a fresh Engine with cfg's limits that runs
	// cfg.Children by target label and reports to cfg.Observer. It registers its own cleanup with t
	// (closing the Engine and anything it started). Every call must give
	// an Engine that shares no owners or Work with earlier ones.
	NewEngine(t *testing.T, cfg Config) *work.Engine
	// Capabilities reports what the implementation legitimately chooses.
	Capabilities() Capabilities
}

// Config is the configuration the suite asks for. Every field is set. A
// Harness gives its Engine (and its workers) the limits as work's options,
// Options, 0 and negative values included: the options give every value
// one meaning on every Engine (see work.WithMaxRunning and the others),
// and the suite checks it.
type Config struct {
	MaxRunning     int           // Works of one target running at once (the suite's queued Work shares its target with the running ones); 0: the default
	MaxOutstanding int           // queued + running Works per owner; 0: the default
	MaxStarts      int           // starts per owner over its lifetime; 0: no limit
	MaxDepth       int           // owner nesting limit; 0: the default
	MaxResultBytes int           // output size limit; 0: no limit
	MaxDuration    time.Duration // per-Work deadline, as WithDefaultBudget's Budget.MaxDuration: 0 the default, -1 none
	Retain         int           // terminal Works kept per owner (WithRetention's count); 0: the default
	RetainAge      time.Duration // terminal Works settled longer ago are hidden (WithRetention's age); 0: none
	// MaxMessageBytes and MaxQueuedGuidance are WithMaxMessageBytes and
	// WithGuidanceQueue's count (0: the defaults).
	MaxMessageBytes   int
	MaxQueuedGuidance int
	Children          map[string]Child
	// Observer is the Observer the Engine must report every event and
	// call to (a *Recorder the suite reads); an implementation that runs
	// Work in workers gives it to them too.
	Observer observe.Observer
}

// Options are c's limits as work's options, in one place for every
// Harness: work.New takes them as they are, a durable runner through
// its WithOptions. The Observer is not among them.
func (c Config) Options() []work.Option {
	return []work.Option{work.WithMaxRunning(c.MaxRunning), work.WithMaxOutstanding(c.MaxOutstanding),
		work.WithMaxStarts(c.MaxStarts), work.WithMaxDepth(c.MaxDepth), work.WithMaxResultBytes(c.MaxResultBytes),
		work.WithDefaultBudget(work.Budget{MaxDuration: c.MaxDuration}), work.WithRetention(c.Retain, c.RetainAge),
		work.WithMaxMessageBytes(c.MaxMessageBytes), work.WithGuidanceQueue(c.MaxQueuedGuidance, 0)}
}

// Capabilities is what an implementation legitimately chooses.
type Capabilities struct {
	// Durable says which guarantee pair every Ref must carry: false for
	// {process-local, process-local} (the in-process engine), true for
	// {durable, durable} (a durable runner), as Ref.Durable.
	Durable bool
	// Attempt is the attempt a Work that ran once must report: 1.
	Attempt int
	// ExactWaitClock: the Engine measures Result waits on real time, so a
	// short timeout returns a non-terminal Status after about that long.
	// Every implementation must honour ctx and the zero timeout.
	ExactWaitClock bool
	// Pools: the Engine carries budgets and pools (SetPool). An Engine
	// without them must refuse SetPool with an error, never accept a pool
	// it does not enforce.
	Pools bool
	// AtLeastOnceEvents: the Engine delivers Observer events at least once
	// (a durable runner whose worker dies after reporting and before it
	// records the step reports again), so a Work's transition may repeat
	// with the same From and To. The suite then drops exact repeats before
	// it checks the order and the one terminal event; without it a repeat
	// is a defect.
	AtLeastOnceEvents bool
	// LivenessTimeout is how long a running Work's child may go without a
	// sign of life before the Engine declares its worker lost (a durable
	// runner's heartbeat timeout); zero for an Engine that has none (the
	// in-process engine). A cancel must reach a running child well
	// within it, and a child whose call in progress outlasts it after a
	// cancel must still end as it returns, never failed as lost.
	LivenessTimeout time.Duration
}

// Child is one of the suite's children: run with the Work's input, or,
// when Job is set, an external job (Spec.Job, Kind function, Run nil)
// submitted with the Work's input.
type Child struct {
	Kind observe.Kind
	Run  func(ctx context.Context, input string) (string, error)
	Job  *work.Job
}

// The suite's target labels.
const (
	// Echo is a function child that returns its input at once.
	Echo = "echo"
	// Agent is an agent child steered by the test: its input names a
	// control that tells it when to take guidance and when to return.
	Agent = "agent"
	// Func is a function child steered like Agent.
	Func = "func"
	// Turns is an agent child that makes model requests (BeginRequest)
	// until its budget grants the final one, and returns
	// "requests=N final=BUDGET"; a refused request fails it.
	Turns = "turns"
	// Job is an external job (Child.Job) steered by the test through its
	// input, polled with a short backoff (JobBackoff).
	Job = "job"
)

// Children returns the suite's children, keyed by label. A Harness must
// run exactly these for Config.Children (the suite passes them in).
func Children() map[string]Child {
	return map[string]Child{
		Echo:  {Kind: work.KindFunction, Run: func(_ context.Context, in string) (string, error) { return in, nil }},
		Agent: {Kind: work.KindAgent, Run: runControlled},
		Func:  {Kind: work.KindFunction, Run: runControlled},
		Turns: {Kind: work.KindAgent, Run: runTurns},
		Job:   {Kind: work.KindFunction, Job: suiteJob()},
	}
}

// Run runs the conformance suite against h.
func Run(t *testing.T, h Harness) {
	caps := h.Capabilities()
	if caps.Attempt == 0 {
		t.Fatal("enginetest: Capabilities.Attempt must be set (1 for an engine that ran a Work once)")
	}
	s := &suite{h: h, caps: caps}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Lifecycle", s.lifecycle},
		{"ObserverAndClock", s.observerAndClock},
		{"ObserverEvents", s.observerEvents},
		{"ShutdownReported", s.shutdownReported},
		{"BadInput", s.badInput},
		{"OwnerIsolation", s.ownerIsolation},
		{"LimitOutstanding", s.limitOutstanding},
		{"LimitStarts", s.limitStarts},
		{"LimitDepth", s.limitDepth},
		{"LimitResultBytes", s.limitResultBytes},
		{"LimitDuration", s.limitDuration},
		{"LimitValues", s.limitValues},
		{"SpecResultBytes", s.specResultBytes},
		{"GuidanceLimits", s.guidanceLimits},
		{"ResultWait", s.resultWait},
		{"ResultReadMark", s.resultReadMark},
		{"CancelQueued", s.cancelQueued},
		{"CancelRunning", s.cancelRunning},
		{"CancelLosesToCompletion", s.cancelLosesToCompletion},
		{"CancelUnrelatedFailure", s.cancelUnrelatedFailure},
		{"CancelSlowCall", s.cancelSlowCall},
		{"CancelTerminal", s.cancelTerminal},
		{"CancelRacesCompletion", s.cancelRacesCompletion},
		{"ChildFailure", s.childFailure},
		{"GuidanceOrder", s.guidanceOrder},
		{"GuidanceIdempotency", s.guidanceIdempotency},
		{"GuidanceRefusals", s.guidanceRefusals},
		{"GuidanceDropped", s.guidanceDropped},
		{"Detach", s.detach},
		{"Release", s.release},
		{"ListOrder", s.listOrder},
		{"StatusRows", s.statusRows},
		{"Foreground", s.foreground},
		{"Approval", s.approval},
		{"Budget", s.budget},
		{"LaunchIdempotency", s.launchIdempotency},
		{"Pool", s.pool},
		{"Subscribe", s.subscribe},
		{"SubscribeExpired", s.subscribeExpired},
		{"JobCompletes", s.jobCompletes},
		{"JobFails", s.jobFails},
		{"JobCancelWhileWaiting", s.jobCancelWhileWaiting},
		{"JobLaunchIdempotency", s.jobLaunchIdempotency},
		{"JobDeadline", s.jobDeadline},
		{"JobDeadlineDecides", s.jobDeadlineDecides},
		{"Updates", s.updates},
		{"Progress", s.progress},
		{"ProgressOrder", s.progressOrder},
		{"RetentionOrder", s.retentionOrder},
		{"AutoBackground", s.autoBackground},
		{"AutoBackgroundLimits", s.autoBackgroundLimits},
		{"AutoBackgroundIdempotency", s.autoBackgroundIdempotency},
		{"AutoBackgroundLatency", s.autoBackgroundLatency},
	} {
		t.Run(tc.name, tc.run)
	}
}

type suite struct {
	h    Harness
	caps Capabilities
}
