package temporal

import (
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// rejoinChange marks the workflows that rejoin an attempt timed out by
// its heartbeat (workflow.GetVersion): histories from before it replay
// without.
const rejoinChange = "agentwork-rejoin"

// maxRejoins bounds the Rejoins of one Work (each follows a heartbeat
// timeout of the attempt or of the last Rejoin).
const maxRejoins = 10

// rejoin takes back an attempt that Temporal timed out by its heartbeat
// (err) from the Worker that ran it, named by the rejoin queue in the
// attempt's last heartbeat: a Rejoin activity there, which must start
// within the rejoin window, returns the attempt's outcome (see
// rejoin.go). The original outcome and error stand (worker_lost) when the
// attempt sent no heartbeat, the Work was cancelled meanwhile, or no
// Worker took the Rejoin in time or held the attempt. A Rejoin timed out
// by its heartbeat is asked again (at most maxRejoins in all).
func (w *workRun) rejoin(ctx, actx workflow.Context, out runOutcome, err error) (runOutcome, error) {
	queue := lostAt(err, w.dc)
	if queue == "" || actx.Err() != nil {
		return out, err
	}
	if workflow.GetVersion(ctx, rejoinChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return out, err
	}
	// The attempt timed out is the last Temporal made: the Work's last
	// (its retries exhausted) when its child is retryable, else the one
	// that started.
	n := max(w.Attempt, 1)
	var ae *temporal.ActivityError
	if errors.As(err, &ae) && ae.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED {
		n = max(w.in.MaxAttempts, n)
	}
	for range maxRejoins {
		ao := workflow.ActivityOptions{
			TaskQueue:              queue,
			ScheduleToStartTimeout: rejoinWindow(w.in.HeartbeatTimeout),
			StartToCloseTimeout:    startToClose(w.in.MaxDuration),
			HeartbeatTimeout:       w.in.HeartbeatTimeout,
			WaitForCancellation:    true,
			RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		}
		var got runOutcome
		rerr := workflow.ExecuteActivity(workflow.WithActivityOptions(actx, ao), rejoinActivityName,
			rejoinInput{ID: w.in.ID, Attempt: n}).Get(ctx, &got)
		var canceled *temporal.CanceledError
		switch {
		case rerr == nil:
			return got, nil
		case errors.As(rerr, &canceled):
			return got, rerr
		}
		// A Rejoin timed out by its heartbeat: it lost the server too, or
		// went to a poll of the Worker's that the cut swallowed (the
		// server dispatched it, the Worker never got it). Ask again.
		var timeout *temporal.TimeoutError
		if errors.As(rerr, &timeout) && timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT && actx.Err() == nil {
			if next := lostAt(rerr, w.dc); next != "" {
				queue = next
			}
			continue
		}
		return out, err
	}
	return out, err
}

// lostAt returns the rejoin queue named by the last heartbeat of an
// activity that err says timed out by its heartbeat ("" otherwise). The
// SDK decodes a failure's heartbeat details with the client's failure
// converter, which stays on the SDK's default data converter unless the
// client was given one of its own: under a payload codec it cannot open
// them, and lostAt then opens them with dc, the Worker's converter
// (WithDataConverter), as they came.
func lostAt(err error, dc converter.DataConverter) string {
	var timeout *temporal.TimeoutError
	if !errors.As(err, &timeout) || timeout.TimeoutType() != enumspb.TIMEOUT_TYPE_HEARTBEAT || !timeout.HasLastHeartbeatDetails() {
		return ""
	}
	var (
		p     struct{}
		queue string
	)
	if timeout.LastHeartbeatDetails(&p, &queue) == nil {
		return queue
	}
	var raw [2]converter.RawValue
	if timeout.LastHeartbeatDetails(&raw[0], &raw[1]) != nil || raw[1].Payload() == nil || dc.FromPayload(raw[1].Payload(), &queue) != nil {
		return ""
	}
	return queue
}
