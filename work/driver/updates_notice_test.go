package driver

import (
	"context"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
)

func TestPublishUpdates(t *testing.T) {
	r := Record{ID: "w1", Label: "agent", State: work.StateRunning}
	ms := []UpdateMeta{{Seq: 3, Bytes: 7, Time: t0}, {Seq: 4, Bytes: 9, Time: t0.Add(time.Second)}}
	var got []work.Notice
	publish := func(n work.Notice) { got = append(got, n) }
	if seen := publishUpdates(r, nil, 2, publish); seen != 2 || len(got) != 0 {
		t.Fatalf("publishUpdates(none) = %d, %d notices; want 2, none", seen, len(got))
	}
	if seen := publishUpdates(r, ms, 2, publish); seen != 4 {
		t.Fatalf("publishUpdates = %d, want 4", seen)
	}
	for i, n := range got {
		w := work.Notice{Kind: work.NoticeUpdate, WorkID: "w1", Target: "agent", State: work.StateRunning,
			Seq: ms[i].Seq, Bytes: ms[i].Bytes, Time: ms[i].Time}
		if n != w {
			t.Fatalf("notice %d = %+v, want %+v", i, n, w)
		}
	}
}

// TestPortableUpdateNotices: Subscribe's update notices come from the
// Store's update metadata, in order and before the Work's settlement
// notice; a read that fails is tried again at the next poll, and a Work
// whose updates are not visible to the owner gets none.
func TestPortableUpdateNotices(t *testing.T) {
	o := work.NewOwner("coordinator")
	s := &fakeStore{
		recs: []Record{
			{ID: id(1), Label: "agent", State: work.StateRunning},
			{ID: id(2), Label: "agent", State: work.StateRunning},
		},
		metas: map[string][]UpdateMeta{id(1): {
			{Seq: 1, Bytes: 5, Time: t0},
			{Seq: 2, Bytes: 11, Time: t0.Add(time.Second)},
		}},
	}
	p, _ := newPortable(t, s)
	sub, err := p.Subscribe(context.Background(), o, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	s.mu.Lock()
	s.metaFails = 1
	s.recs[0].Updates, s.recs[0].State, s.recs[0].Finished = 2, work.StateCompleted, t0
	s.recs[1].Updates, s.recs[1].State, s.recs[1].Finished = 1, work.StateFailed, t0
	s.mu.Unlock()
	var got []work.Notice
	for len(got) < 4 {
		got = append(got, next(t, sub))
	}
	var one []work.Notice
	for _, n := range got {
		if n.WorkID == id(1) {
			one = append(one, n)
		} else if n.Kind != work.NoticeSettled || n.State != work.StateFailed {
			t.Fatalf("Work not visible in its updates: %+v, want only its settlement notice", n)
		}
	}
	want := []work.Notice{
		{Kind: work.NoticeUpdate, WorkID: id(1), Target: "agent", State: work.StateCompleted, Seq: 1, Bytes: 5, Time: t0},
		{Kind: work.NoticeUpdate, WorkID: id(1), Target: "agent", State: work.StateCompleted, Seq: 2, Bytes: 11, Time: t0.Add(time.Second)},
	}
	if len(one) != 3 || one[0] != want[0] || one[1] != want[1] || one[2].Kind != work.NoticeSettled {
		t.Fatalf("notices of the Work with updates: %+v, want %+v then its settlement", one, want)
	}
}
