package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The states the driver can hold.
const (
	stateFailureRatio    = "failure-ratio"
	stateQueued          = "queued"
	stateCancelRequested = "cancel-requested"
	stateSlotsFull       = "slots-full"
	stateOrphaned        = "orphaned"
	stateApproval        = "approval-pending"
)

// The targets the driver's Works run.
const (
	targetFlaky   = "flaky"
	targetHolder  = "holder"
	targetStuck   = "stuck"
	targetWaiter  = "waiter"
	targetOrphan  = "orphan"
	targetSpender = "spender"
	targetGated   = "gated"
	targetBatch   = "batch"
)

// failEvery is how often the failure-ratio state runs a Work.
const failEvery = 100 * time.Millisecond

// orphanEvery is how often the orphaned state shuts an engine down.
const orphanEvery = 500 * time.Millisecond

// heldWork is one Work the driver holds in a live state.
type heldWork struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	State  string `json:"state"`
}

// driver holds one state on an in-process engine.
type driver struct {
	sup   *work.Engine
	obs   observe.Observer // the orphaned state's engines report to it too
	owner work.Owner
	state string

	release  chan struct{} // closed by /driver/release
	shutdown chan struct{} // closed when the driver stops: stuck children return
	relOnce  sync.Once

	mu     sync.Mutex
	ready  bool
	held   []heldWork
	failed error // the first error setting the state up or feeding it
}

// setUp puts the engine into the driver's state.
func (d *driver) setUp(ctx context.Context, wg *sync.WaitGroup) error {
	var err error
	switch d.state {
	case stateFailureRatio:
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.feedFlaky(ctx)
		}()
	case stateQueued:
		if err = d.hold(ctx, targetHolder, false); err == nil {
			err = d.queue(ctx)
		}
	case stateCancelRequested:
		err = d.hold(ctx, targetStuck, true)
	case stateSlotsFull:
		if err = d.hold(ctx, targetHolder, false); err == nil {
			if err = d.hold(ctx, targetStuck, true); err == nil {
				err = d.queue(ctx)
			}
		}
	case stateApproval:
		if err = d.awaitApproval(ctx, wg); err == nil {
			err = d.waitJob(ctx)
		}
	case stateOrphaned:
		// A pool large enough never to refuse the spender in a day.
		if err = d.sup.SetPool(ctx, d.owner, work.Budget{MaxTurns: 1_000_000, MaxToolCalls: 1_000_000, MaxTokens: 1_000_000_000}); err != nil {
			break
		}
		if err = d.orphan(ctx); err == nil {
			err = d.spend(ctx)
		}
		if err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.feedOrphans(ctx)
			}()
		}
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.ready = true
	d.mu.Unlock()
	return nil
}

// feedFlaky starts a Work of target flaky every failEvery until ctx is done
// or the driver stops; it fails until release and completes after. Each
// reports two updates first: its Spec allows one, so the second is
// refused (agentwork_work_updates_total, outcomes accepted and count;
// agentwork_work_update_bytes), which no alert watches.
func (d *driver) feedFlaky(ctx context.Context) {
	tick := time.NewTicker(failEvery)
	defer tick.Stop()
	run := func(ctx context.Context) (string, error) {
		if _, err := work.ReportUpdate(ctx, "first", []byte(`{"step":"starting"}`), false); err != nil {
			d.fail(fmt.Errorf("%s: first update: %w", targetFlaky, err))
		}
		if _, err := work.ReportUpdate(ctx, "second", []byte(`{"step":"one too many"}`), false); !errors.Is(err, work.ErrUpdateRefused) {
			d.fail(fmt.Errorf("%s: second update: %v, want refused", targetFlaky, err))
		}
		select {
		case <-d.release:
			return "done", nil
		default:
			return "", errors.New("alertdriver: failing on purpose")
		}
	}
	for {
		if _, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetFlaky, Kind: work.KindFunction},
			Updates: &work.UpdatePolicy{MaxUpdates: 1}, Run: run}); err != nil {
			d.fail(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-d.shutdown:
			return
		case <-tick.C:
		}
	}
}

// feedOrphans makes an orphan and runs a spender every orphanEvery until
// release, ctx is done or the driver stops.
func (d *driver) feedOrphans(ctx context.Context) {
	tick := time.NewTicker(orphanEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.shutdown:
			return
		case <-d.release:
			return
		case <-tick.C:
		}
		if err := d.orphan(ctx); err != nil {
			d.fail(err)
		}
		if err := d.spend(ctx); err != nil {
			d.fail(err)
		}
	}
}

// orphan shuts down a fresh engine, observed like the driver's, while
// its Work of target orphan runs and ignores cancellation until release (or
// until the driver stops): with no shutdown grace, Shutdown abandons it at
// once. The engine is closed by its Shutdown and reports no gauges.
func (d *driver) orphan(ctx context.Context) error {
	sup := work.New(work.WithObserver(d.obs), work.WithShutdownGrace(0), work.WithDefaultBudget(work.Budget{MaxDuration: -1}))
	running := make(chan struct{})
	_, err := sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetOrphan, Kind: work.KindFunction},
		Run: func(context.Context) (string, error) {
			close(running)
			select { // ignores its context
			case <-d.release:
			case <-d.shutdown:
			}
			return "done", nil
		}})
	if err != nil {
		_ = sup.Close(ctx)
		return fmt.Errorf("start %s: %w", targetOrphan, err)
	}
	select {
	case <-running:
	case <-ctx.Done():
		_ = sup.Close(ctx)
		return ctx.Err()
	}
	cancelled, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cancel()
	rep, err := sup.Shutdown(cancelled)
	if err != nil {
		return err
	}
	if rep.OrphanCount() != 1 {
		select {
		case <-d.release: // released meanwhile: the child may have returned in time
			return nil
		case <-d.shutdown:
			return nil
		default:
		}
		return fmt.Errorf("shutdown orphaned %d, want 1: %v", rep.OrphanCount(), rep)
	}
	return nil
}

// spend runs a Work of target spender from the owner's pool and waits for
// it: an agent child with a budget of one turn that does what an agent
// adapter does at its model-request boundary (a request with its tokens
// and a tool call, then its final request once the turn is used up).
func (d *driver) spend(ctx context.Context) error {
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetSpender, Kind: work.KindAgent},
		Budget: work.Budget{MaxTurns: 1},
		Run: func(ctx context.Context) (string, error) {
			ex, _ := work.ExecutionFrom(ctx)
			if turn, err := boundary.BeginRequest(ex); err != nil || turn.Final {
				return "", fmt.Errorf("first request: %+v, %v", turn, err)
			}
			boundary.EndRequest(ex, 120, 40, true)
			boundary.BeginToolCall(ex)
			if turn, err := boundary.BeginRequest(ex); err != nil || !turn.Final {
				return "", fmt.Errorf("final request: %+v, %v", turn, err)
			}
			boundary.EndRequest(ex, 60, 20, true)
			return "done", nil
		}})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetSpender, err)
	}
	st, _, err := d.sup.Result(ctx, d.owner, ref.ID, work.MaxResultWait)
	if err != nil {
		return err
	}
	if st.State != work.StateCompleted {
		return fmt.Errorf("%s is %s, want completed", targetSpender, st.State)
	}
	return nil
}

// hold starts a Work of target that runs until release (or until the driver
// stops) and waits until it runs. With cancel it then asks it to cancel: the
// child ignores its cancelled context until release, so the Work stays
// cancel-requested and keeps its slot.
func (d *driver) hold(ctx context.Context, target string, cancel bool) error {
	running := make(chan struct{})
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: target, Kind: work.KindFunction},
		Run: func(ctx context.Context) (string, error) {
			close(running)
			select {
			case <-d.release:
			case <-d.shutdown:
			}
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "done", nil
		}})
	if err != nil {
		return fmt.Errorf("start %s: %w", target, err)
	}
	select {
	case <-running:
	case <-ctx.Done():
		return ctx.Err()
	}
	state := work.StateRunning
	if cancel {
		r, err := d.sup.Cancel(ctx, d.owner, ref.ID)
		if err != nil {
			return fmt.Errorf("cancel %s: %w", target, err)
		}
		if r.State != work.StateCancelRequested {
			return fmt.Errorf("cancel %s: state %s, want %s", target, r.State, work.StateCancelRequested)
		}
		state = r.State
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: target, State: string(state)})
	d.mu.Unlock()
	return nil
}

// queue starts a Work of target waiter, which must queue behind the held
// ones (every slot is taken); once it runs it completes.
func (d *driver) queue(ctx context.Context) error {
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetWaiter, Kind: work.KindFunction},
		Run: func(context.Context) (string, error) { return "done", nil }})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetWaiter, err)
	}
	st, err := d.sup.Status(ctx, d.owner, ref.ID)
	if err != nil {
		return err
	}
	if st.State != work.StateQueued {
		return fmt.Errorf("%s is %s, want queued (are the slots not all taken?)", targetWaiter, st.State)
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: targetWaiter, State: string(work.StateQueued)})
	d.mu.Unlock()
	return nil
}

func (d *driver) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed == nil {
		d.failed = err
	}
}

// approvalTimeout is the gated Work's approval timeout: far longer than
// the driver runs, even on a fast clock (a week is 2.8 hours at 60x).
const approvalTimeout = 7 * 24 * time.Hour

// awaitApproval starts a Work of target gated that needs approval and
// holds it unanswered (queued, out of the dispatch queue, no slot) until
// release, when the approver role approves it: it then runs and
// completes.
func (d *driver) awaitApproval(ctx context.Context, wg *sync.WaitGroup) error {
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetGated, Kind: work.KindFunction},
		NeedsApproval: true, ApprovalTimeout: approvalTimeout,
		Run: func(context.Context) (string, error) { return "done", nil }})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetGated, err)
	}
	st, err := d.sup.Status(ctx, d.owner, ref.ID)
	if err != nil {
		return err
	}
	if st.State != work.StateQueued || !st.AwaitingApproval {
		return fmt.Errorf("%s is %s (awaiting approval %v), want queued awaiting approval", targetGated, st.State, st.AwaitingApproval)
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: targetGated, State: string(work.StateQueued)})
	d.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-d.release:
		case <-d.shutdown:
			return
		case <-ctx.Done():
			return
		}
		if err := d.sup.Approve(context.WithoutCancel(ctx), work.Approver(), ref.ID); err != nil {
			d.fail(fmt.Errorf("approve %s: %w", targetGated, err))
		}
	}()
	return nil
}

// waitJob starts an external job of target batch that answers waiting
// until release, then done: between polls it is running and holds no slot
// (agentwork_work_waiting, agentwork_job_polls_total), and it fires no
// alert. It returns once the job waits.
func (d *driver) waitJob(ctx context.Context) error {
	submitted := make(chan struct{})
	ref, err := d.sup.Start(ctx, work.Spec{Owner: d.owner, Target: work.Target{Label: targetBatch, Kind: work.KindFunction},
		Job: &work.Job{
			Submit: func(context.Context, string, string) ([]byte, error) {
				close(submitted)
				return []byte("batch"), nil
			},
			Await: func(context.Context, []byte) (work.Poll, error) {
				select {
				case <-d.release:
					return work.Poll{State: work.PollDone, Output: "done"}, nil
				default:
					return work.Poll{State: work.PollWaiting}, nil
				}
			},
		}})
	if err != nil {
		return fmt.Errorf("start %s: %w", targetBatch, err)
	}
	select {
	case <-submitted:
	case <-ctx.Done():
		return ctx.Err()
	}
	d.mu.Lock()
	d.held = append(d.held, heldWork{ID: ref.ID, Target: targetBatch, State: string(work.StateRunning)})
	d.mu.Unlock()
	return nil
}
