package enginetest

import (
	"context"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

// updateReq asks a controlled child to report an update.
type updateReq struct {
	key      string
	value    []byte
	question bool
	reply    chan updateReply
}

type updateReply struct {
	rec work.UpdateReceipt
	err error
}

// beginReply is what a controlled child saw at a boundary it took through
// BeginRequest: how long BeginRequest took (its question wait), the
// questions it reports unanswered, and the guidance it then drained.
type beginReply struct {
	err        error
	waited     time.Duration
	unanswered []int
	guidance   []string
}

type awaitReply struct {
	guidance []string
	err      error
}

// beginAt takes a model-request boundary as an agent adapter does:
// BeginRequest (which waits while a question is open), then Unanswered and
// Guidance.
func beginAt(ctx context.Context) beginReply {
	ex, _ := work.ExecutionFrom(ctx)
	t0 := time.Now()
	_, err := boundary.BeginRequest(ex)
	r := beginReply{err: err, waited: time.Since(t0)}
	r.unanswered = boundary.Unanswered(ex)
	r.guidance = boundary.Guidance(ex)
	return r
}
