package work

import (
	"context"
)

// exited is called as a child goroutine or a foreground call ends.
func (s *Engine) exited() {
	if s.live.Add(-1) == 0 && s.closing.Load() {
		s.mu.Lock()
		s.signalIdleLocked()
		s.mu.Unlock()
	}
}

// execute runs a child on its own goroutine and settles it. When the
// settlement frees the slot for a queued Work, the goroutine runs that one
// next (one goroutine per busy slot rather than per Work).
//
// The child runs in executeOne and settles here, two frames from the
// goroutine's start: with the no-op Observer settling fits in a new
// goroutine's first stack, which then never grows unless the child needs
// it to.
//
// jctx is an external job's Submit context (prepareRunLocked); a child
// runs with its item's context.
func (s *Engine) execute(it *item, jctx context.Context) {
	defer s.exited()
	for it != nil {
		if it.job != nil { // an external job: its Submit runs here (job.go)
			it, jctx = s.submitJob(it, jctx)
			continue
		}
		run := it.run
		it.run = nil
		out, err, panicked := s.executeOne(it, &it.xctx, run)
		it, jctx = s.settle(it, out, err, panicked, true)
	}
}

// executeOne runs it's child. When the child calls runtime.Goexit it
// settles it (and the goroutine ends).
func (s *Engine) executeOne(it *item, ctx context.Context, run RunFunc) (string, error, bool) {
	returned := false
	defer func() {
		// A child that calls runtime.Goexit (t.FailNow, log.Fatal's cousins)
		// neither returns nor panics: settle it as a panic so that its slot
		// is freed and it does not stay running forever.
		if !returned {
			s.settle(it, "", nil, true, false)
		}
	}()
	if !s.nop {
		growStack()
	}
	// Each Work's child gets the label afresh: the goroutine may have run
	// another Work whose child replaced its labels (pprof.Do restores
	// those of the child's context, which has none).
	s.labelChild()
	out, err, panicked := invoke(ctx, run)
	returned = true
	return out, err, panicked
}

// growStack grows a new child goroutine's stack while it is still shallow.
// Delivering a Work's events to an Observer that records them (an OTel
// SDK, a logger) from the child's goroutine as it settles needs a few
// kilobytes of stack; grown there, deep in settle, every Work would pay
// for copying and adjusting all of its frames. Grown here it costs a copy
// of two frames, and nothing on a goroutine whose stack is already large
// (a reused one, or a child that needed it).
//
//go:noinline
func growStack() {
	var buf [stackHeadroom]byte
	keepStack(buf[:])
}

// stackHeadroom is what growStack reserves: the stack grows to the next
// power of two above it (8 KB).
const stackHeadroom = 4096

//go:noinline
func keepStack(b []byte) { _ = b[len(b)-1] }

func invoke(ctx context.Context, run RunFunc) (out string, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			out, err, panicked = "", nil, true
		}
	}()
	out, err = run(ctx)
	return out, err, false
}
