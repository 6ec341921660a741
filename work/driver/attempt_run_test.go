package driver

import (
	"context"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// TestSlotsRun: Run gives the child the Work's hooks and its Execution,
// which Progress and the Snapshot read while it runs; the child's
// progress events reach the Observer, with its target and kind, only
// until it returned, never the caller's Event; a panic is reported, not
// raised.
func TestSlotsRun(t *testing.T) {
	var s Slots
	rec := &enginetest.Recorder{}
	a := &Attempt{ID: "w1", Owner: "o", Label: "echo", Kind: work.KindFunction, N: 1}
	defer s.Add(a)()
	if p := s.Progress(a); p != (observe.Progress{}) {
		t.Fatalf("Progress before Run = %+v, want zero", p)
	}
	callerEvents := 0
	var leaked context.Context
	out, panicked, ex, err := s.Run(context.Background(), a, rec, Remote{WorkID: "w1", OwnerID: "o",
		Event: func(observe.Event) { callerEvents++ }},
		func(ctx context.Context, in string) (string, error) {
			work.ReportProgress(ctx, 2, 5)
			if p := s.Progress(a); p.Done != 2 || p.Total != 5 {
				t.Errorf("Progress while it runs = %+v, want 2 of 5", p)
			}
			if snap := s.Snapshot([]string{"echo"}, 1); len(snap.Live) != 1 || snap.Live[0].Progress.Done != 2 {
				t.Errorf("Snapshot while it runs = %+v, want the attempt at 2", snap.Live)
			}
			return "out:" + in, nil
		}, "in")
	if out != "out:in" || err != nil || panicked || ex == nil {
		t.Fatalf("Run = %q, %v, %v, %v; want the child's output and its Execution", out, err, panicked, ex)
	}
	progress := func() (n int) {
		for _, e := range rec.Events() {
			if e.Type != observe.EventProgress {
				continue
			}
			if e.Target != "echo" || e.Kind != work.KindFunction {
				t.Errorf("progress event of %q (%s), want echo (function)", e.Target, e.Kind)
			}
			n++
		}
		return n
	}
	n := progress()
	if n == 0 {
		t.Fatal("no progress event reached the Observer while the child ran")
	}
	if callerEvents != 0 {
		t.Fatalf("the caller's Event got %d events; Run's gate replaces it", callerEvents)
	}

	// A child that reports only after it returned (its first report, so
	// no throttle holds it back): the counts change, no event goes out.
	c := &Attempt{ID: "w3", Label: "echo", Kind: work.KindFunction}
	defer s.Add(c)()
	s.Run(context.Background(), c, rec, Remote{WorkID: "w3"}, func(ctx context.Context, _ string) (string, error) {
		leaked = ctx
		return "", nil
	}, "")
	work.ReportProgress(leaked, 3, 5)
	if m := progress(); m != n {
		t.Fatalf("%d progress events after the child returned", m-n)
	}
	if p := s.Progress(c); p.Done != 3 {
		t.Fatalf("Progress after a late report = %+v, want its counts", p)
	}

	b := &Attempt{ID: "w2", Label: "echo", Kind: work.KindAgent}
	defer s.Add(b)()
	out, panicked, _, err = s.Run(context.Background(), b, rec, Remote{WorkID: "w2"},
		func(context.Context, string) (string, error) { panic("child") }, "")
	if out != "" || err != nil || !panicked {
		t.Fatalf("Run of a panicking child = %q, %v, %v; want panicked", out, err, panicked)
	}
}
