package temporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The admission check of the package doc's Mapping (WithAdmissionGrace):
// the registry checks each admission whose workflow it has not heard from
// (no record of it came: a Work still queued, or awaiting approval) once
// its grace has passed, with a local activity that asks Temporal whether
// the workflow exists; one that does not is forgotten
// (driver.Registry.Forget: its record and launch identity dropped, its
// reservation refunded). The grace is far above the admission's own bound
// (the coordinator starts the workflow within its RPC timeout), so a slow
// coordinator's start is never forgotten.

// admissionGrace is how long after its admission a Work's workflow is
// looked for, when the registry has no grace of its own.
const admissionGrace = 5 * time.Minute

// admissionChange marks the registries that check their admissions
// (workflow.GetVersion): histories from before it replay without.
const admissionChange = "agentwork-admission-check"

// describeWorkName is the local activity that reports whether a Work's
// workflow exists.
const describeWorkName = "agentwork.WorkExists"

// workExists is the local activity describeWorkName on c: whether
// workflow id exists (a NotFound answer: false; any other error: the
// error, and the registry asks again later).
func workExists(c client.Client) func(ctx context.Context, id string) (bool, error) {
	return func(ctx context.Context, id string) (bool, error) {
		_, err := c.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return false, nil
		}
		return err == nil, err
	}
}

// unconfirmed records that Work id was admitted and its workflow not
// seen yet.
func (o *ownerRun) unconfirmed(ctx workflow.Context, id string) {
	if o.st.Unconfirmed == nil {
		o.st.Unconfirmed = map[string]time.Time{}
	}
	o.st.Unconfirmed[id] = workflow.Now(ctx).Add(o.grace())
}

func (o *ownerRun) grace() time.Duration {
	if o.st.Grace > 0 {
		return o.st.Grace
	}
	return admissionGrace
}

// forget is the forget update: the start failed after its admission.
func (o *ownerRun) forget(id string) {
	delete(o.st.Unconfirmed, id)
	o.st.Forget(id)
}

// await waits until an update changed the state (or a release), or until
// the first unconfirmed admission's check is due, and then checks the
// admissions that are due. One timer serves every admission: it is set
// for the earliest check and replaced only by an earlier one (later
// admissions are due later), so that an admission costs the registry's
// history nothing more while its checks wait.
func (o *ownerRun) await(ctx workflow.Context) {
	next, ok := o.nextCheck()
	if !ok || workflow.GetVersion(ctx, admissionChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		_ = workflow.Await(ctx, func() bool { return o.trim || o.dirty })
		return
	}
	if o.due || !next.After(workflow.Now(ctx)) {
		o.due, o.timerAt = false, time.Time{}
		o.check(ctx)
		return
	}
	if o.timerAt.IsZero() || next.Before(o.timerAt) {
		if o.stopTimer != nil {
			o.stopTimer()
		}
		tctx, stop := workflow.WithCancel(ctx)
		o.stopTimer, o.timerAt = stop, next
		timer := workflow.NewTimer(tctx, next.Sub(workflow.Now(ctx)))
		workflow.Go(ctx, func(ctx workflow.Context) {
			if timer.Get(ctx, nil) == nil {
				o.due = true
			}
		})
	}
	_ = workflow.Await(ctx, func() bool { return o.trim || o.dirty || o.due })
}

// nextCheck is the earliest due check of an unconfirmed admission.
func (o *ownerRun) nextCheck() (time.Time, bool) {
	var next time.Time
	for _, at := range o.st.Unconfirmed {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// check asks Temporal about each admission that is due: a Work whose
// workflow exists is confirmed, one whose workflow does not is
// forgotten, one Temporal did not answer for is asked again a grace
// later. The ids are taken in order (a map's is not deterministic).
func (o *ownerRun) check(ctx workflow.Context) {
	now := workflow.Now(ctx)
	var due []string
	for _, r := range o.st.Records {
		if at, ok := o.st.Unconfirmed[r.ID]; ok && !at.After(now) {
			due = append(due, r.ID)
		}
	}
	for id := range o.st.Unconfirmed { // a record gone meanwhile (released, forgotten)
		if o.st.Find(id) < 0 {
			delete(o.st.Unconfirmed, id)
		}
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second})
	for _, id := range due {
		var exists bool
		if err := workflow.ExecuteLocalActivity(lctx, describeWorkName, id).Get(ctx, &exists); err != nil {
			o.st.Unconfirmed[id] = workflow.Now(ctx).Add(o.grace())
			continue
		}
		if _, ok := o.st.Unconfirmed[id]; !ok {
			continue // a record of it came while the activity ran
		}
		delete(o.st.Unconfirmed, id)
		if !exists {
			o.st.Forget(id)
		}
		o.dirty = true
	}
}
