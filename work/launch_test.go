package work_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

func launchSpec(o work.Owner, target work.Target, callID, input string, run work.RunFunc) work.Spec {
	return work.Spec{Owner: o, Target: target, Run: run, CallID: callID, InputDigest: sha256.Sum256([]byte(input))}
}

// TestLaunchIdempotent: a retried launch (the first reply was lost) gets
// the same Ref and starts nothing, even after the Work ended or at the
// outstanding limit; another input or target is a conflict; no identity,
// no deduplication.
func TestLaunchIdempotent(t *testing.T) {
	h := newHarness(t, work.WithMaxOutstanding(1))
	o := work.NewOwner("coord")
	c := h.child()
	first, err := h.s.Start(context.Background(), launchSpec(o, fn, "call_1", "input", c.run))
	if err != nil {
		t.Fatal(err)
	}
	<-c.started
	retried, err := h.s.Start(context.Background(), launchSpec(o, fn, "call_1", "input", immediate("never runs")))
	if err != nil || retried != first {
		t.Fatalf("retry = %v, %v; want %v", retried, err, first)
	}
	for name, spec := range map[string]work.Spec{
		"other input":  launchSpec(o, fn, "call_1", "other", immediate("x")),
		"other target": launchSpec(o, agent, "call_1", "input", immediate("x")),
	} {
		_, err := h.s.Start(context.Background(), spec)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		wantCode(t, err, "conflict")
	}
	// No identity: a new Work (refused here by the outstanding limit).
	if _, err := h.s.Start(context.Background(), launchSpec(o, fn, "", "input", immediate("x"))); err == nil {
		t.Fatal("a launch without identity was deduplicated")
	}
	c.complete("done")
	h.obs.waitTerminal(first.ID)
	if again, err := h.s.Start(context.Background(), launchSpec(o, fn, "call_1", "input", immediate("x"))); err != nil || again != first {
		t.Fatalf("replay after the end = %v, %v", again, err)
	}
	if n := h.obs.count(observe.EventQueued); n != 1 {
		t.Fatalf("%d Works queued, want 1", n)
	}
	// Another owner's identity space is its own.
	if ref, err := h.s.Start(context.Background(), launchSpec(work.NewOwner("b"), fn, "call_1", "input", immediate("x"))); err != nil || ref == first {
		t.Fatalf("other owner: %v, %v", ref, err)
	}
}

// TestLaunchConcurrentOneIdentity: launches racing with one identity start
// exactly one Work and all get its Ref.
func TestLaunchConcurrentOneIdentity(t *testing.T) {
	h := newHarness(t)
	o := work.NewOwner("coord")
	const n = 16
	refs := make([]work.Ref, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ref, err := h.s.Start(context.Background(), launchSpec(o, fn, "call_x", "same", immediate("x")))
			if err != nil {
				t.Error(err)
			}
			refs[i] = ref
			// The Ref is usable at once.
			if _, err := h.s.Status(t.Context(), o, ref.ID); err != nil {
				t.Errorf("Status of the returned Ref: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, r := range refs[1:] {
		if r != refs[0] {
			t.Fatalf("refs differ: %v vs %v", r, refs[0])
		}
	}
	if got := h.obs.count(observe.EventQueued); got != 1 {
		t.Fatalf("%d Works queued, want 1", got)
	}
	list, _ := h.s.List(t.Context(), o)
	if len(list) != 1 {
		t.Fatalf("List has %d Works", len(list))
	}
}

// TestLaunchRecordsBounded: an owner remembers at most MaxLaunchRecords
// identities, forgetting the oldest.
func TestLaunchRecordsBounded(t *testing.T) {
	h := newHarness(t, work.WithMaxStarts(0), work.WithMaxOutstanding(1<<20))
	o := work.NewOwner("coord")
	refs := make([]work.Ref, work.MaxLaunchRecords+1)
	for i := range refs {
		ref, err := h.s.Start(context.Background(), launchSpec(o, fn, fmt.Sprint("call_", i), "in", immediate("x")))
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = ref
	}
	if ref, _ := h.s.Start(context.Background(), launchSpec(o, fn, "call_0", "in", immediate("x"))); ref == refs[0] {
		t.Fatal("the oldest identity is still remembered")
	}
	if ref, _ := h.s.Start(context.Background(), launchSpec(o, fn, "call_2", "in", immediate("x"))); ref != refs[2] {
		t.Fatal("a recent identity was forgotten")
	}
}

// TestLaunchRecordsKeepDigests: a launch record keeps a digest of the
// model-supplied identity, never the identity: MaxLaunchRecords launches
// with 256 KiB identities leave well under one identity's size per record
// on the heap once their Works are read, and a replay still dedupes.
func TestLaunchRecordsKeepDigests(t *testing.T) {
	const idSize = 256 << 10
	s := work.New(work.WithMaxOutstanding(1<<20), work.WithMaxStarts(0))
	defer s.Close(context.Background())
	o := work.NewOwner("coord")
	ctx := context.Background()
	id := func(i int) string { return fmt.Sprintf("%08d", i) + strings.Repeat("x", idSize) }
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	var first work.Ref
	for i := range work.MaxLaunchRecords {
		ref, err := s.Start(ctx, launchSpec(o, fn, id(i), "input", immediate("ok")))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ref
		}
	}
	after := heap()
	if grown := int64(after) - int64(before); grown > work.MaxLaunchRecords*idSize/8 {
		t.Fatalf("the heap grew by %d bytes over %d launches: the records keep the identities", grown, work.MaxLaunchRecords)
	}
	if ref, err := s.Start(ctx, launchSpec(o, fn, id(0), "input", immediate("x"))); err != nil || ref != first {
		t.Fatalf("replay = %v, %v; want %v", ref, err, first)
	}
}
