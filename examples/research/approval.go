package main

import (
	"context"
	"sync"
	"time"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/work"
)

// publishBrief is a backgroundable function child that needs approval: a
// launch stays queued, out of the dispatch queue, until the application
// (approver below) approves it. On the scripted model it then runs until
// the coordinator has seen it running.
func (d *demo) publishBrief() *lc.Child {
	return lc.NewFunction("publish_brief", "Publishes a brief to the team wiki (a person approves it first).",
		func(ctx context.Context, _ string) (string, error) {
			if !d.live {
				select {
				case <-d.publishGate:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return "Published to the team wiki." + d.plant("output"), nil
		}, lc.WithApproval(time.Hour))
}

// approver is the application's approval handler: woken by the owner's
// approval notices, it reads each pending request through the engine
// (work.Engine.Pending), prints its target, who launched it and its
// input (the application's own data: the transcript may show it,
// telemetry never does) and approves it. On the scripted model it answers
// once the coordinator has seen the Work queued (d.approveGate), so that
// the transcript is the same on every run; a person would simply take
// their time.
type approver struct {
	wg   sync.WaitGroup
	sub  *work.Subscription
	done chan struct{} // closed by stop
}

// startApprover subscribes to owner's notices and answers its approvals
// until stop.
func (d *demo) startApprover(ctx context.Context, sup *work.Engine, owner work.Owner) (*approver, error) {
	sub, err := sup.Subscribe(ctx, owner, 0)
	if err != nil {
		return nil, err
	}
	a := &approver{sub: sub, done: make(chan struct{})}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for n := range sub.C() {
			if n.Kind != work.NoticeApproval {
				continue // a settlement: RunUntilSettled handles those
			}
			if !d.live {
				select {
				case <-d.approveGate:
				case <-a.done:
					return
				case <-ctx.Done():
					return
				}
			}
			d.answer(ctx, sup, owner)
		}
	}()
	return a, nil
}

// answer approves every request pending for owner, printing each.
func (d *demo) answer(ctx context.Context, sup *work.Engine, owner work.Owner) {
	defer d.approvedOnce.Do(func() { close(d.approved) })
	reqs, err := sup.Pending(ctx, owner)
	if err != nil {
		d.tr.printf("application: pending approvals: %v\n", err)
		return
	}
	for _, r := range reqs {
		d.tr.printf("application: approval requested for %s (work %s), launched by %s, input %s\n", r.TargetLabel, r.Work.ID, r.Owner, oneLine(r.Input))
		if err := sup.Approve(ctx, owner, r.Work.ID); err != nil {
			d.tr.printf("application: approve: %v\n", err)
			continue
		}
		d.tr.printf("application: approved %s\n", r.Work.ID)
	}
}

// stop ends the approver and waits for it.
func (a *approver) stop() {
	close(a.done)
	a.sub.Close()
	a.wg.Wait()
}

// awaitApproved waits until the approver has answered, or 10 s at most
// (the script then goes on and the transcript shows it).
func (d *demo) awaitApproved() {
	select {
	case <-d.approved:
	case <-time.After(10 * time.Second):
	}
}
