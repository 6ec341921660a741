package langchaingo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
// foreground call waits for the job on the engine's Call (which submits
// and polls it while the caller waits) and returns its output.
// Cancelling the Work stops the wait and calls job.Cancel when it is set;
// without job.Cancel the job at the service goes on. The maximum duration
// (WithBudget's MaxDuration) counts from when the Work starts running;
// past it the Work fails with class deadline_exceeded (job.Cancel is
// called when set). The result-byte limit applies to the output.
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
// application approves it (work.Engine.Approve; it then joins the
// queue) or denies it (it ends cancelled, class denied). The application
// learns of the request from a work.Notice of kind work.NoticeApproval
// and reads it (target, input, launching owner) with
// work.Engine.Pending; the input reaches the approver only, never
// telemetry. No answer within timeout (0: 24 hours) ends the Work cancelled with class approval_timeout. Approval
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

// NewTypedJob is NewJob for a job whose input is a JSON object decoded
// into In: schema is that object's JSON schema (what the model is shown,
// as WithSchema sets it), and submit gets the decoded value with the
// idempotency key. An input that does not decode into In (a wrong type,
// a field In does not have) is refused with the error object code
// invalid_child_input before any Work is accepted; a WithValidate runs
// after the decoding. job's Await, Cancel, Backoff and bounds are used as
// NewJob uses them; job.Submit must be nil (Prepare fails with
// ErrInvalidChild otherwise: the submit argument is the job's submit).
func NewTypedJob[In any](name, description string, schema map[string]any, submit func(ctx context.Context, key string, in In) ([]byte, error), job work.Job, opts ...ChildOption) *Child {
	c := NewJob(name, description, job, append([]ChildOption{WithSchema(schema)}, opts...)...)
	switch {
	case job.Submit != nil:
		c.err = prepErr(ErrInvalidChild, "NewTypedJob %q: job.Submit is set; the submit argument is the job's submit", name)
	case submit == nil:
		c.err = prepErr(ErrInvalidChild, "NewTypedJob %q: nil submit", name)
	case schema == nil:
		c.err = prepErr(ErrInvalidChild, "NewTypedJob %q: nil schema (the model needs the input object's fields)", name)
	}
	c.c.Job.Submit = func(ctx context.Context, key, input string) ([]byte, error) {
		in, err := decodeInput[In](input)
		if err != nil {
			return nil, err
		}
		return submit(ctx, key, in)
	}
	validate := c.c.Validate
	c.c.Validate = func(input string) error {
		if _, err := decodeInput[In](input); err != nil {
			return err
		}
		if validate != nil {
			return validate(input)
		}
		return nil
	}
	return c
}

// decodeInput decodes a child's input object into In, refusing fields In
// does not have.
func decodeInput[In any](input string) (In, error) {
	var in In
	dec := json.NewDecoder(strings.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("the input does not match this child's fields: %v", err)
	}
	if dec.More() {
		return in, errors.New("the input must be one JSON object")
	}
	return in, nil
}
