package langchaingo

import (
	"errors"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// ErrJobNotPrepared: Call of a job child (NewJob) used as a plain tool,
// outside Prepare. A job is submitted and polled by an engine; listed in
// Prepare's tools it runs in the foreground or, with Backgroundable, in
// the background.
var ErrJobNotPrepared = errors.New("langchaingo: a job child runs on an engine: list it in Prepare's tools")

// NewJob returns a function child that is an external job at another
// service, made of job's submit and await steps (see work.Job): the
// engine calls job.Submit with the child's input (the string, or the input
// object's JSON when WithSchema is set) and the Work's id as the
// idempotency key, stores the handle it returns and polls job.Await with
// backoff (job.Backoff: 1 s doubling to 30 s by default) until it answers
// done or failed. Between polls the Work holds no goroutine and no running
// slot; the work tool shows it running, and an answer of waiting delivers
// nothing to the model.
//
// Wrapped with Backgroundable, a launch returns the work.ref at once. A
// foreground call waits for the job on the engine's Call, in the caller's
// goroutine, and returns its output. Cancelling the Work stops the wait
// and calls job.Cancel when it is set; without job.Cancel the job at the
// service goes on. The maximum duration (WithBudget's MaxDuration) counts
// from when the Work starts running; past it the Work fails with class
// deadline_exceeded (job.Cancel is called when set). The result-byte
// limit applies to the output.
//
// job is copied; an invalid job (work.Job.Validate: Submit or Await nil, a
// negative bound or backoff) makes Prepare fail with
// middleware.ErrInvalidChild. Call on the returned Child outside Prepare
// returns ErrJobNotPrepared.
func NewJob(name, description string, job work.Job, opts ...ChildOption) *Child {
	c := newChild(name, description, work.KindFunction, nil, opts)
	c.c.Job = &job
	return c
}

// WithApproval makes each background launch of the child wait for the
// application's approval before it starts: the launch returns the
// work.ref at once and the work tool shows the Work queued, but it stays
// out of the dispatch queue, holding no running slot, until the
// application approves it (work.Approvals.Approve; it then joins the
// queue) or denies it (it ends cancelled, class denied). The application
// learns of the request from a work.Notice of kind work.NoticeApproval
// and reads it (target, input, launching owner) with
// work.Approvals.Pending; the input reaches the approver only, never
// telemetry. No answer within timeout (0: work.DefaultApprovalTimeout,
// 24 h) ends the Work cancelled with class approval_timeout. Approval
// lets the child start; what it then does needs its own authorization.
//
// Only a backgroundable child can wait for approval: Prepare fails with
// middleware.ErrInvalidChild for a foreground-only one, and a foreground
// call of a backgroundable one gets the error object with code
// invalid_child_input.
// A negative timeout makes Prepare fail (middleware.ErrNegativeLimit).
func WithApproval(timeout time.Duration) ChildOption {
	return childOptionFunc(func(c *middleware.Child) {
		c.NeedsApproval, c.ApprovalTimeout = true, timeout
	})
}
