// Package scenario is the scripted lifecycle the telemetry tests measure:
// a real work.Engine on a manual clock, driven step by step through
// every transition, guidance event, work-tool action outcome, a refusal, a
// status block, a pool, a child's updates, its spending and budget
// exhaustion, a Shutdown that abandons a child and an external job polled
// to its end, so that every metric has known, exact values. The
// Prometheus golden (promexport/testdata/scenario.golden) is its exposition.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// Start is the manual clock's starting time.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Targets of the scenario.
var (
	Researcher = work.Target{Label: "researcher", Kind: work.KindAgent}
	Summarizer = work.Target{Label: "summarizer", Kind: work.KindFunction}
)

// Run drives the scenario on a new in-process engine observed by obs. When it
// returns, the registry holds: researcher completed 1, cancelled 1,
// running 1; summarizer failed 2; the running limit is 2; the
// coordinator's pool (40 turns, 80 tool calls, 200,000 tokens) has the
// running researcher's share reserved. A second engine, shut down
// with a summarizer child that ignores cancellation, is closed. Call stop
// to release both running children and close the first engine.
//
// The metrics it produces:
//
//	transitions   researcher: queued 3, running 3, completed 1, cancel-requested 1, cancelled 1
//	              summarizer: queued 3, running 3, failed 2, cancel-requested 1 (the orphan)
//	duration      researcher completed 1.5s, cancelled 0.5s; summarizer failed 5s (error) and 10s (deadline)
//	queue wait    researcher 0, 1.5s, 0; summarizer 0, 0, 0
//	result bytes  researcher 300
//	updates       researcher accepted 2 (10 and 17 bytes), refused count 1 (r1, which declares at most 2)
//	guidance      accepted 3, delivered 1, dropped 2
//	actions       send ok 3, result ok 1, list ok 1, status not_found 1, invalid invalid 1,
//	              cancel ok 1, detach not_found 1, result timeout 1
//	status block  one block of 3 rows
//	refused       researcher starts 1
//	budgets       exhausted: researcher turns 1 (r1's final request), summarizer duration 1 (the deadline)
//	              researcher spent 2 turns, 3 tool calls, 2,500 input and 700 output tokens
//	pool          reserved turns 10, tool_calls 20, tokens 50,000 (r3's share);
//	              remaining turns 28, tool_calls 57, tokens 146,800
//	orphaned      summarizer 1
//	job           batch (an engine of its own, closed: no gauges): queued 1, running 1, completed 1,
//	              ran 7 s, 100 result bytes; polls waiting 1, error 1, done 1
//	backgrounded  batch 1 (its call, made without run_in_background, moved at its bound)
func Run(obs observe.Observer, clk *fakeclock.Clock) (stop func(), err error) {
	ctx := context.Background()
	s := work.New(work.WithObserver(obs), work.WithClock(clk),
		work.WithMaxRunning(2), work.WithMaxStarts(5), work.WithDefaultBudget(work.Budget{MaxDuration: time.Hour}))
	o := work.NewOwner("coordinator")
	r := &runner{ctx: ctx, s: s, o: o, obs: obs}
	release3, releaseOrphan, orphanReturned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	orphanStarted := false
	stop = func() {
		close(release3)
		close(releaseOrphan)
		if orphanStarted {
			<-orphanReturned
		}
		_ = s.Close(ctx)
	}
	defer func() {
		if err != nil {
			stop()
			stop = nil
		}
	}()

	// The coordinator's pool: each researcher without a budget of its own
	// reserves its share (10 turns, 20 tool calls, 50,000 tokens).
	if err := s.SetPool(ctx, o, work.Budget{MaxTurns: 40, MaxToolCalls: 80, MaxTokens: 200_000}); err != nil {
		return stop, err
	}

	// Two running (r1, s1), one queued (r2).
	release1, releaseS1 := make(chan struct{}), make(chan struct{})
	r.budget = work.Budget{MaxTurns: 2}
	r.updates = &work.UpdatePolicy{MaxUpdates: 2}
	r1, err := r.launch(Researcher, 0, func(ctx context.Context) (string, error) {
		<-release1
		ex, _ := work.ExecutionFrom(ctx)
		_ = boundary.Guidance(ex) // delivered 1
		// Two updates (10 and 20 bytes) and a third over the count.
		for i, v := range []string{`{"step":1}`, `{"step":2,"of":2}`, `{"step":3}`} {
			_, err := work.ReportUpdate(ctx, fmt.Sprint("u", i), []byte(v), false)
			if (i < 2) != (err == nil) {
				return "", fmt.Errorf("update %d: %v", i+1, err)
			}
		}
		// What the langchaingo adapter does at the model-request boundary:
		// two ordinary turns with three tool calls, then the final request
		// once the two turns are used up (budget turns exhausted).
		for _, tok := range [][2]int64{{1200, 300}, {900, 250}} {
			if turn, err := boundary.BeginRequest(ex); err != nil || turn.Final {
				return "", fmt.Errorf("ordinary request: %+v, %v", turn, err)
			}
			boundary.EndRequest(ex, tok[0], tok[1], true)
			boundary.BeginToolCall(ex)
		}
		boundary.BeginToolCall(ex)
		if turn, err := boundary.BeginRequest(ex); err != nil || !turn.Final || turn.Budget != observe.BudgetTurns {
			return "", fmt.Errorf("final request: %+v, %v", turn, err)
		}
		boundary.EndRequest(ex, 400, 150, true)
		return strings.Repeat("r", 300), nil
	})
	r.budget, r.updates = work.Budget{}, nil
	if err != nil {
		return stop, err
	}
	s1, err := r.launch(Summarizer, 0, func(ctx context.Context) (string, error) {
		<-releaseS1
		return "", errors.New("summarizer broke")
	})
	if err != nil {
		return stop, err
	}
	r2, err := r.launch(Researcher, 0, func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		return stop, err
	}
	for _, id := range []string{r1, r2, r2} {
		if err := r.action("send", id, "ok", func() error {
			_, err := s.Send(ctx, o, id, "", "look deeper")
			return err
		}); err != nil {
			return stop, err
		}
	}

	// r1 completes after 1.5 s; r2 starts after waiting 1.5 s.
	clk.Advance(1500 * time.Millisecond)
	close(release1)
	if err := r.action("result", r1, "ok", func() error {
		st, _, err := s.Result(ctx, o, r1, work.MaxResultWait)
		return want(st, err, work.StateCompleted)
	}); err != nil {
		return stop, err
	}
	r.obs.Event(ctx, observe.Event{Type: observe.EventStatusBlock, Owner: o.ID(), Time: clk.Now(), Count: 3})
	_ = r.action("list", "", "ok", nil)
	_ = r.action("status", strings.Repeat("0", 32), "not_found", nil)
	_ = r.action("frobnicate", "", "invalid", nil)

	// r2 is cancelled after running 0.5 s, dropping its 2 guidance messages.
	clk.Advance(500 * time.Millisecond)
	if err := r.action("cancel", r2, "ok", func() error {
		_, err := s.Cancel(ctx, o, r2)
		return err
	}); err != nil {
		return stop, err
	}
	if st, _, err := s.Result(ctx, o, r2, work.MaxResultWait); want(st, err, work.StateCancelled) != nil {
		return stop, want(st, err, work.StateCancelled)
	}

	// s1 fails after 5 s.
	clk.Advance(3 * time.Second)
	close(releaseS1)
	if st, _, err := s.Result(ctx, o, s1, work.MaxResultWait); want(st, err, work.StateFailed) != nil {
		return stop, want(st, err, work.StateFailed)
	}

	// s2 overruns its 10 s deadline.
	s2, err := r.launch(Summarizer, 10*time.Second, func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		return stop, err
	}
	clk.Advance(10 * time.Second)
	if st, _, err := s.Result(ctx, o, s2, work.MaxResultWait); want(st, err, work.StateFailed) != nil {
		return stop, want(st, err, work.StateFailed)
	}
	_ = r.action("detach", strings.Repeat("f", 32), "not_found", nil)

	// r3 stays running; a sixth start is refused by the starts limit.
	r3, err := r.launch(Researcher, 0, func(ctx context.Context) (string, error) {
		<-release3
		return "late", nil
	})
	if err != nil {
		return stop, err
	}
	_ = r.action("result", r3, "timeout", nil)
	if _, err := r.launch(Researcher, 0, func(context.Context) (string, error) { return "", nil }); !errors.Is(err, work.ErrLimit) {
		return stop, fmt.Errorf("sixth start: got %v, want a limit error", err)
	}

	// A second engine is shut down while its summarizer child ignores
	// cancellation: Shutdown abandons it (orphaned 1). Closed by Shutdown,
	// it reports no gauges; the child returns at stop.
	s2nd := work.New(work.WithObserver(obs), work.WithClock(clk), work.WithShutdownGrace(0))
	started := make(chan struct{})
	if _, err := s2nd.Start(ctx, work.Spec{Owner: o, Target: Summarizer, Run: func(context.Context) (string, error) {
		defer close(orphanReturned)
		close(started)
		<-releaseOrphan // ignores cancellation
		return "", nil
	}}); err != nil {
		_ = s2nd.Close(ctx)
		return stop, err
	}
	orphanStarted = true
	<-started
	done, cancel := context.WithCancel(ctx)
	cancel()
	if rep, err := s2nd.Shutdown(done); err != nil || rep.OrphanCount() != 1 {
		return stop, fmt.Errorf("shutdown: %v, %v, want one orphan", rep, err)
	}
	if err := runJob(ctx, obs, o); err != nil {
		return stop, err
	}
	return stop, nil
}

// Batch is the scenario's external job target.
var Batch = work.Target{Label: "batch", Kind: work.KindFunction}

// jobObserver forwards to an Observer (but not as a Watcher: the job's
// engine reports no gauges) and reports the job's waiting and polled
// events on waits, once the Observer has them: by then its next poll's
// timer is armed.
type jobObserver struct {
	observe.Observer
	waits chan observe.EventType
}

func (j jobObserver) Event(ctx context.Context, e observe.Event) {
	j.Observer.Event(ctx, e)
	if e.Type == observe.EventWaiting || e.Type == observe.EventPolled {
		j.waits <- e.Type
	}
}

// runJob runs one external job of target batch on an engine of its own
// (its own manual clock, closed at the end, so it adds no gauge): it is
// submitted, polled after 1 s (waiting), 2 s later (a transient error)
// and 4 s later (done, 100 bytes): polls waiting 1, error 1, done 1; it
// ran 7 s. Its call is one that may move to the background (as the
// middleware makes for a child with an auto-background bound): it moves
// while the job waits (backgrounded 1).
func runJob(ctx context.Context, obs observe.Observer, o work.Owner) error {
	clk := fakeclock.New(Start)
	jo := jobObserver{Observer: obs, waits: make(chan observe.EventType, 4)}
	s := work.New(work.WithObserver(jo), work.WithClock(clk))
	defer func() { _ = s.Close(ctx) }()
	answers := []work.Poll{{State: work.PollWaiting}, {}, {State: work.PollDone, Output: strings.Repeat("b", 100)}}
	polls := 0
	job := &work.Job{
		Submit: func(context.Context, string, string) ([]byte, error) { return []byte("handle"), nil },
		Await: func(context.Context, []byte) (work.Poll, error) {
			polls++
			if polls == 2 {
				return work.Poll{}, errors.New("the service is unavailable")
			}
			return answers[polls-1], nil
		},
	}
	const bound = time.Second
	pctx, end := obs.Begin(ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: Batch.Label, Owner: o.ID(), AutoBackground: bound})
	ref, err := s.Start(pctx, work.Spec{Owner: o, Target: Batch, Job: job, Input: "batch input"})
	if err != nil {
		end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: "limit_exceeded"})
		return err
	}
	if t := <-jo.waits; t != observe.EventWaiting {
		end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
		return fmt.Errorf("job: %s, want waiting", t)
	}
	obs.Event(pctx, observe.Event{Type: observe.EventBackgrounded, WorkID: ref.ID, Owner: o.ID(), Target: Batch.Label,
		Kind: Batch.Kind, From: work.StateRunning, Time: clk.Now(), Duration: bound})
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		clk.Advance(d)
		if t := <-jo.waits; t != observe.EventPolled {
			return fmt.Errorf("job: %s, want polled", t)
		}
	}
	st, _, err := s.Result(ctx, o, ref.ID, work.MaxResultWait)
	return want(st, err, work.StateCompleted)
}

type runner struct {
	ctx     context.Context
	s       *work.Engine
	o       work.Owner
	obs     observe.Observer
	budget  work.Budget        // the next launch's Spec.Budget
	updates *work.UpdatePolicy // the next launch's Spec.Updates
}

// launch does what the middleware does for run_in_background: a call span
// around Start.
func (r *runner) launch(t work.Target, maxDur time.Duration, run work.RunFunc) (string, error) {
	ctx, end := r.obs.Begin(r.ctx, observe.ToolCall{Kind: observe.ToolCallLaunch, Tool: t.Label, Owner: r.o.ID()})
	b := r.budget
	if maxDur > 0 {
		b.MaxDuration = maxDur
	}
	ref, err := r.s.Start(ctx, work.Spec{Owner: r.o, Target: t, Run: run, Budget: b, Updates: r.updates})
	if err != nil {
		end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: "limit_exceeded"})
		return "", err
	}
	end(observe.ToolCallEnd{WorkID: ref.ID, Outcome: "ok"})
	return ref.ID, nil
}

// action does what the work tool does: a call span around fn, ended with
// outcome.
func (r *runner) action(action, id, outcome string, fn func() error) error {
	_, end := r.obs.Begin(r.ctx, observe.ToolCall{Kind: observe.ToolCallAction, Tool: "work", Action: action, WorkID: id, Owner: r.o.ID()})
	var err error
	if fn != nil {
		err = fn()
	}
	if err != nil {
		end(observe.ToolCallEnd{Outcome: "failed", ErrorClass: "internal"})
		return err
	}
	end(observe.ToolCallEnd{Outcome: outcome})
	return nil
}

func want(st work.Status, err error, s observe.State) error {
	if err != nil {
		return err
	}
	if st.State != s {
		return fmt.Errorf("work %s is %s, want %s", st.Work.ID, st.State, s)
	}
	return nil
}
