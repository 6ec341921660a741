package work

import (
	"context"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
)

// profileLabel is the profiler label (runtime/pprof) that every goroutine
// running a child carries, with a value unique to its in-process engine
// within the process (a decimal number). Goroutines a child starts inherit
// it, so CPU and goroutine profiles can be split by engine. The engine only
// sets it, never reads it. It is documented on Engine.
const profileLabel = "agentwork.engine"

var engineSeq atomic.Uint64

// childLabels returns the context whose profiler labels an in-process
// engine's child goroutines carry.
func childLabels() context.Context {
	v := strconv.FormatUint(engineSeq.Add(1), 10)
	return pprof.WithLabels(context.Background(), pprof.Labels(profileLabel, v))
}

// labelChild gives the calling goroutine the engine's child label.
func (s *Engine) labelChild() { pprof.SetGoroutineLabels(s.labels) }

// closedFromChild reports whether Close (or Shutdown) with ctx is called
// by a child of s: whether ctx carries an Execution of s (the child's own
// context, or one derived from it). It is the only way a call is
// recognised as a child's; see Close.
func (s *Engine) closedFromChild(ctx context.Context) bool {
	ex, ok := ExecutionFrom(ctx)
	if !ok {
		return false
	}
	switch rt := ex.rt.(type) {
	case *item:
		return rt.s == s
	case *callExec:
		return rt.s == s
	}
	return false
}
