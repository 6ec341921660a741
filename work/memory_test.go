package work_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/internal/fakeclock"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// terminalSignal is an Observer that signals every terminal event and keeps
// nothing. A lossy one drops signals when its channel is full.
type terminalSignal struct {
	observe.NopObserver
	ch    chan struct{}
	lossy bool
}

func (o terminalSignal) Event(_ context.Context, e observe.Event) {
	if !e.To.Terminal() {
		return
	}
	if !o.lossy {
		o.ch <- struct{}{}
		return
	}
	select {
	case o.ch <- struct{}{}:
	default:
	}
}

// TestMemoryReturnsToBaseline runs 20,000 Works with 256-byte outputs to
// the end and detaches all of them (half while unfinished, half after the
// result was read), then requires the heap to return to the baseline taken
// after a warm-up batch. The tolerance, 1 MB and 2,000 objects over 20,000
// Works (50 bytes and 0.1 objects per Work), fails if each finished Work
// leaked as little as its output, its item or one small allocation.
func TestMemoryReturnsToBaseline(t *testing.T) {
	const (
		batches = 20
		batch   = 1000
		owners  = 10
		works   = batches * batch
	)
	obs := terminalSignal{ch: make(chan struct{}, batch)}
	s := work.New(work.WithClock(fakeclock.New(t0)), work.WithObserver(obs), work.WithMaxRunning(64),
		work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0), work.WithRetention(batch, 0))
	defer s.Close(context.Background())
	ctx := context.Background()
	round := func() {
		gate := make(chan struct{})
		run := func(context.Context) (string, error) {
			<-gate
			return strings.Repeat("r", 256), nil
		}
		refs := make([]work.Ref, batch)
		for i := range refs {
			o := work.NewOwner(fmt.Sprintf("owner-%d", i%owners))
			ref, err := s.Start(ctx, work.Spec{Owner: o, Target: agent, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			refs[i] = ref
			if _, err := s.Send(ctx, o, ref.ID, fmt.Sprintf("c%d", i), "some guidance"); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if _, err := s.Detach(ctx, o, ref.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		close(gate)
		for range batch {
			<-obs.ch
		}
		for i := 1; i < batch; i += 2 {
			o := work.NewOwner(fmt.Sprintf("owner-%d", i%owners))
			if _, out, err := s.Result(ctx, o, refs[i].ID, 0); err != nil || len(out) != 256 {
				t.Fatalf("result: %d bytes, %v", len(out), err)
			}
			if _, err := s.Detach(ctx, o, refs[i].ID); err != nil {
				t.Fatal(err)
			}
		}
		if n := censusTotal(s); n != 0 {
			t.Fatalf("registry holds %d items after everything was detached", n)
		}
	}
	round() // warm-up: maps, pools and the scheduler reach their steady size
	round()
	before := heap()
	for range batches {
		round()
	}
	after := heap()
	dBytes := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	dObjects := int64(after.HeapObjects) - int64(before.HeapObjects)
	t.Logf("after %d works: heap %+d bytes (%.1f B/work), %+d objects", works, dBytes, float64(dBytes)/works, dObjects)
	if dBytes > 1<<20 || dObjects > 2000 {
		t.Fatalf("heap grew by %d bytes and %d objects over %d finished, detached works", dBytes, dObjects, works)
	}
}

func heap() runtime.MemStats {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m
}
