package enginetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

func runTurns(ctx context.Context, _ string) (string, error) {
	ex, ok := work.ExecutionFrom(ctx)
	if !ok {
		return "", errors.New("enginetest: no Execution")
	}
	for n := 1; n <= 1000; n++ {
		turn, err := boundary.BeginRequest(ex)
		if err != nil {
			return "", err
		}
		boundary.EndRequest(ex, 3, 2, true)
		if turn.Final {
			return "requests=" + strconv.Itoa(n) + " final=" + turn.Budget, nil
		}
	}
	return "", errors.New("enginetest: the budget never ran out")
}

// SlowOutput is what a controlled child whose slow call outlasted a
// cancel returns when it completes anyway.
const SlowOutput = "finished after a slow call"

// control steers one controlled child run, keyed by the Work's input.
type control struct {
	started  chan struct{} // closed when the child starts running
	once     sync.Once
	runs     atomic.Int32
	boundary chan chan boundaryReply // a model-request boundary
	finish   chan finishReq          // return
	onCancel string                  // "" (return ctx error), "complete" (on the test's finish), "fail", "slow" or "slow-complete"
	hold     time.Duration           // "slow", "slow-complete": how long the call in progress goes on after the cancel
	ended    chan error              // ctx.Err() when the child returned
	update   chan updateReq          // report an update (update_cases.go)
	begin    chan chan beginReply    // a model-request boundary through BeginRequest (its question wait)
	await    chan chan awaitReply    // a function child's AwaitAnswer
	progress chan progressReq        // report progress counts (progress_cases.go)
	// progressAtStart: the child reports progress (1 of 2) as its very
	// first act, before it is seen started (progress_cases.go).
	progressAtStart bool
}

type boundaryReply struct {
	guidance []string
	scope    work.Owner
	ok       bool // the child had an Execution
}

type finishReq struct {
	out string
	err error
}

var (
	controls sync.Map // token -> *control
	tokenSeq atomic.Int64
)

func newControl(t *testing.T, onCancel string) (string, *control) {
	return newControlWith(t, onCancel, "")
}

// newControlWith is newControl with suffix appended to the token (the
// Work's input).
func newControlWith(t *testing.T, onCancel, suffix string) (string, *control) {
	token := "ctl-" + strconv.FormatInt(tokenSeq.Add(1), 10) + suffix
	c := &control{started: make(chan struct{}), boundary: make(chan chan boundaryReply),
		finish: make(chan finishReq, 1), onCancel: onCancel, ended: make(chan error, 4),
		update: make(chan updateReq), begin: make(chan chan beginReply), await: make(chan chan awaitReply),
		progress: make(chan progressReq)}
	controls.Store(token, c)
	t.Cleanup(func() { controls.Delete(token) })
	return token, c
}

func runControlled(ctx context.Context, token string) (string, error) {
	v, ok := controls.Load(token)
	if !ok {
		return "", errors.New("enginetest: unknown control")
	}
	c := v.(*control)
	c.runs.Add(1)
	if c.progressAtStart {
		work.ReportProgress(ctx, 1, 2)
	}
	c.once.Do(func() { close(c.started) })
	for {
		select {
		case <-ctx.Done():
			c.ended <- ctx.Err()
			switch c.onCancel {
			case "complete":
				// Completes when the test says so: the test decides
				// whether a cancel lands before or after the completion.
				// It may still report updates meanwhile (refused: the
				// Work is ending).
				for {
					select {
					case f := <-c.finish:
						return f.out, f.err
					case u := <-c.update:
						rec, err := work.ReportUpdate(ctx, u.key, u.value, u.question)
						u.reply <- updateReply{rec, err}
					}
				}
			case "fail":
				return "", errors.New("an unrelated failure")
			case "slow", "slow-complete":
				// A provider or tool call that does not watch ctx: it
				// goes on for hold, then the child returns.
				time.Sleep(c.hold)
				if c.onCancel == "slow-complete" {
					return SlowOutput, nil
				}
			}
			return "", ctx.Err()
		case reply := <-c.boundary:
			ex, ok := work.ExecutionFrom(ctx)
			r := boundaryReply{ok: ok}
			if ok {
				r.guidance, r.scope = boundary.Guidance(ex), ex.Scope()
			}
			reply <- r
		case f := <-c.finish:
			c.ended <- ctx.Err()
			return f.out, f.err
		case u := <-c.update:
			rec, err := work.ReportUpdate(ctx, u.key, u.value, u.question)
			u.reply <- updateReply{rec, err}
		case reply := <-c.begin:
			reply <- beginAt(ctx)
		case reply := <-c.await:
			g, err := work.AwaitAnswer(ctx)
			reply <- awaitReply{g, err}
		case p := <-c.progress:
			work.ReportProgress(ctx, p.done, p.total)
			close(p.reported)
		}
	}
}
