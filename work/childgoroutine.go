package work

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
)

// profileLabel is the profiler label (runtime/pprof) that every goroutine
// running a child carries, with a value unique to its Supervisor within the
// process (a decimal number). Goroutines a child starts inherit it, so CPU
// and goroutine profiles can be split by Supervisor; Close and Shutdown use
// it to recognise a child that closes its own Supervisor. Its value is
// documented on Supervisor.Close.
const profileLabel = "agentwork.supervisor"

var supervisorSeq atomic.Uint64

// childLabels returns the context whose profiler labels a Supervisor's
// child goroutines carry, and the label's value.
func childLabels() (context.Context, string) {
	v := strconv.FormatUint(supervisorSeq.Add(1), 10)
	return pprof.WithLabels(context.Background(), pprof.Labels(profileLabel, v)), v
}

// labelChild gives the calling goroutine the Supervisor's child label.
func (s *Supervisor) labelChild() { pprof.SetGoroutineLabels(s.labels) }

// closedFromChild reports whether Close (or Shutdown) with ctx is called
// by a child of s, or by a goroutine one of its children started: by ctx
// when it carries an Execution of s, else, while any child runs, by the
// calling goroutine's profiler label.
func (s *Supervisor) closedFromChild(ctx context.Context) bool {
	if ex, ok := ExecutionFrom(ctx); ok && ex.s == s {
		return true
	}
	return s.live.Load() > 0 && callerLabelled(s.labelValue)
}

var probeMu sync.Mutex

// callerLabelled reports whether the calling goroutine carries the child
// label with value v. Go offers no way to read a goroutine's own labels, so
// it reads them from a goroutine profile. Callers are serialised, and only
// the one holding probeMu runs probeLabel: the calling goroutine is the one
// whose stack holds probeLabel (other callers wait in callerLabelled, and
// their records, which may sort first, do not hold it). This stops the
// world once; Close calls it only while children run.
func callerLabelled(v string) bool {
	probeMu.Lock()
	defer probeMu.Unlock()
	return probeLabel(v)
}

// probeLabel is callerLabelled's probe, run only under probeMu.
//
//go:noinline
func probeLabel(v string) bool {
	pc, _, _, _ := runtime.Caller(0)
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return false
	}
	return labelledIn(b.Bytes(), runtime.FuncForPC(pc).Name(), v)
}

// labelledIn reports whether the record of a debug=1 goroutine profile
// whose stack holds function fn carries the child label with value v.
func labelledIn(profile []byte, fn, v string) bool {
	frame := []byte("\t" + fn + "+0x")
	want := []byte(strconv.Quote(profileLabel) + ":" + strconv.Quote(v))
	for rec := range bytes.SplitSeq(profile, []byte("\n\n")) {
		if !bytes.Contains(rec, frame) {
			continue
		}
		for line := range bytes.SplitSeq(rec, []byte("\n")) {
			labels, ok := bytes.CutPrefix(line, []byte("# labels: {"))
			if !ok {
				continue
			}
			labels = bytes.TrimSuffix(labels, []byte("}"))
			for l := range bytes.SplitSeq(labels, []byte(", ")) {
				if bytes.Equal(l, want) {
					return true
				}
			}
		}
		return false
	}
	return false
}
