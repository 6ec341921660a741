package driver

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/internal/contract"
	"github.com/agentwork/agentwork/work/observe"
)

var t0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func TestStatusProjection(t *testing.T) {
	r := Record{ID: "w1", Label: "research", TargetID: "research@1", State: work.StateCancelled, Created: t0,
		Started: t0.Add(time.Second), Finished: t0.Add(2 * time.Second)}
	st := r.Status()
	if st.Class != work.ClassCancelled || st.Attempt != 1 || !st.Work.Durable || st.Work.TargetID != "research@1" {
		t.Fatalf("cancelled with no class: %+v", st)
	}
	r.Class = work.ClassDeadline
	if st := r.Status(); st.Class != work.ClassDeadline {
		t.Fatalf("class kept: %q", st.Class)
	}
	// Waiting and awaiting approval hold only while they can be true.
	q := Record{ID: "w2", State: work.StateQueued, Approval: true, Waiting: true}
	if st := q.Status(); !st.AwaitingApproval || !st.Waiting {
		t.Fatalf("queued: %+v", st)
	}
	q.State = work.StateFailed
	if st := q.Status(); st.AwaitingApproval || st.Waiting {
		t.Fatalf("failed: %+v", st)
	}
}

func TestTakeKeepsWhatOnlyTheRegistryKnows(t *testing.T) {
	r := Record{ID: "w1", Label: "l", Seq: 7, Read: true, Detached: true, Held: [3]int64{1, 2, 3}, Created: t0}
	r.Take(Record{ID: "other", Seq: 99, Rev: 3, State: work.StateCompleted, Attempt: 2, HasResult: true,
		Finished: t0.Add(time.Minute), Updates: 4, Class: "x", Budget: "turns", Progress: observe.Progress{ModelRequests: 5}})
	want := Record{ID: "w1", Label: "l", Seq: 7, Read: true, Detached: true, Held: [3]int64{1, 2, 3}, Created: t0,
		Rev: 3, State: work.StateCompleted, Attempt: 2, HasResult: true, Finished: t0.Add(time.Minute), Updates: 4,
		Class: "x", Budget: "turns", Progress: observe.Progress{ModelRequests: 5}}
	if r != want {
		t.Fatalf("took\n %+v\nwant\n %+v", r, want)
	}
}

// The field names are wire format: a record as an earlier version wrote
// it (Temporal's struct, every field present) still decodes, whole.
func TestRecordWireFormat(t *testing.T) {
	type earlier struct {
		ID, Label, TargetID string
		Kind                observe.Kind
		State               observe.State
		Seq, Rev            int64
		Attempt             int
		Created, Started    time.Time
		Finished            time.Time
		HasResult, Read     bool
		Detached            bool
		Budget, Class       string
		Progress            observe.Progress
		Held                [3]int64
		Spent               *observe.Usage
		Waiting, Approval   bool
		Requested           time.Time
		Updates             int
	}
	in := earlier{ID: "w1", Label: "l", TargetID: "t", Kind: work.KindAgent, State: work.StateCompleted, Seq: 3, Rev: 4,
		Attempt: 1, Created: t0, Finished: t0.Add(time.Minute), HasResult: true, Class: "c", Held: [3]int64{1, 0, 2},
		Spent: &observe.Usage{Turns: 2}, Progress: observe.Progress{Done: 1}, Updates: 2}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	want := Record{ID: "w1", Label: "l", TargetID: "t", Kind: work.KindAgent, State: work.StateCompleted, Seq: 3, Rev: 4,
		Attempt: 1, Created: t0, Finished: t0.Add(time.Minute), HasResult: true, Class: "c", Held: [3]int64{1, 0, 2},
		Spent: r.Spent, Progress: observe.Progress{Done: 1}, Updates: 2}
	if r != want || r.Spent == nil || r.Spent.Turns != 2 {
		t.Fatalf("decoded\n %+v\nwant\n %+v", r, want)
	}
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || back.ID != r.ID || back.Rev != r.Rev || !back.Finished.Equal(r.Finished) {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestListsRowsSettledLive(t *testing.T) {
	recs := []Record{
		{ID: "a", State: work.StateCompleted, Seq: 1, Created: t0, Finished: t0.Add(3 * time.Second), HasResult: true},
		{ID: "b", State: work.StateRunning, Seq: 2, Created: t0, Started: t0},
		{ID: "c", State: work.StateFailed, Seq: 3, Created: t0, Finished: t0.Add(time.Second)},
	}
	list := List(append([]Record(nil), recs...))
	if len(list) != 3 || list[0].Work.ID != "b" {
		t.Fatalf("list: unfinished first: %v", ids(list))
	}
	settled := Settled(append([]Record(nil), recs...))
	if got := ids(settled); len(got) != 2 || got[0] != "c" || got[1] != "a" {
		t.Fatalf("settled, oldest settlement first: %v", got)
	}
	if !Live(recs) || Live(recs[:1]) || Live(nil) {
		t.Fatal("Live")
	}
	rows, more := Rows(append([]Record(nil), recs...), t0.Add(10*time.Second))
	if len(rows) != 3 || more != 0 {
		t.Fatalf("rows %v more %d", rows, more)
	}
	for _, r := range rows {
		if r.ID == "b" && r.Elapsed != 10*time.Second {
			t.Fatalf("running row's elapsed: %v", r.Elapsed)
		}
	}
	if rows, more := Rows(nil, t0); rows != nil || more != 0 {
		t.Fatal("no rows")
	}
	many := make([]Record, contract.MaxListed+5)
	for i := range many {
		many[i] = Record{ID: string(rune('a' + i%26)), State: work.StateRunning, Seq: int64(i)}
	}
	if got := List(many); len(got) != contract.MaxListed {
		t.Fatalf("List is capped at %d: %d", contract.MaxListed, len(got))
	}
	if _, more := Rows(many, t0); more != len(many)-contract.MaxRows {
		t.Fatalf("rows left out: %d", more)
	}
	if got := AwaitingApproval([]Record{{ID: "q", State: work.StateQueued, Approval: true},
		{ID: "r", State: work.StateRunning, Approval: true}, {ID: "p", State: work.StateQueued}}); len(got) != 1 || got[0] != "q" {
		t.Fatalf("awaiting approval: %v", got)
	}
	if r, err := Find(recs, "c"); err != nil || r.ID != "c" {
		t.Fatalf("Find: %v %v", r, err)
	}
	if _, err := Find(recs, "zz"); !errors.Is(err, work.ErrNotFound) {
		t.Fatalf("Find missing: %v", err)
	}
}

func TestCurrent(t *testing.T) {
	recs := []Record{{ID: "old", State: work.StateCompleted, Finished: t0}, {ID: "live", State: work.StateRunning},
		{ID: "new", State: work.StateFailed, Finished: t0.Add(time.Hour)}}
	if got := Current(append([]Record(nil), recs...), t0.Add(90*time.Minute), 0); len(got) != 3 {
		t.Fatalf("no age bound: %d", len(got))
	}
	got := Current(append([]Record(nil), recs...), t0.Add(90*time.Minute), time.Hour)
	if len(got) != 2 || got[0].ID != "live" || got[1].ID != "new" {
		t.Fatalf("current: %+v", got)
	}
}

func TestExpired(t *testing.T) {
	r := Record{State: work.StateCompleted, Finished: t0}
	if r.Expired(t0.Add(time.Hour), 0) || r.Expired(t0.Add(time.Minute), time.Hour) || !r.Expired(t0.Add(2*time.Hour), time.Hour) {
		t.Fatal("terminal expiry")
	}
	r.State = work.StateRunning
	if r.Expired(t0.Add(2*time.Hour), time.Hour) {
		t.Fatal("a live record never expires")
	}
}

func TestMessageAndLaunch(t *testing.T) {
	if !errors.Is(checkMessage(" \n", 16<<10), work.ErrEmptyMessage) {
		t.Fatal("blank")
	}
	if !errors.Is(checkMessage(string(make([]byte, 16<<10+1)), 16<<10), work.ErrMessageTooLarge) {
		t.Fatal("too large")
	}
	if checkMessage("go on", 16<<10) != nil {
		t.Fatal("ordinary")
	}
	if Digest("") != "" || len(Digest("x")) != 64 || Digest("x") == Digest("y") {
		t.Fatal("digest")
	}
	if k, d := LaunchIdentity(work.Spec{}); k != "" || d != "" {
		t.Fatal("no call id: no identity")
	}
	spec := work.Spec{CallID: "call-secret", InputDigest: [32]byte{1}}
	k, d := LaunchIdentity(spec)
	if k != Digest("call-secret") || len(d) != 64 || k == "call-secret" {
		t.Fatalf("launch %q %q", k, d)
	}
}

func ids(sts []work.Status) []string {
	out := make([]string, len(sts))
	for i, s := range sts {
		out[i] = s.Work.ID
	}
	return out
}

func TestEvictOrder(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	recs := []Record{
		{ID: "u1", State: work.StateCompleted, Finished: at(1)},
		{ID: "f", State: work.StateFailed, Finished: at(2)},
		{ID: "live", State: work.StateRunning},
		{ID: "r", State: work.StateCompleted, Read: true, Finished: at(3)},
		{ID: "d", State: work.StateCompleted, Read: true, Detached: true, Finished: at(0)},
		{ID: "u2", State: work.StateCompleted, Finished: at(4)},
		{ID: "x", State: work.StateCancelled, Finished: at(5)},
	}
	var gone []string
	for {
		i := Evict(recs, 2)
		if i < 0 {
			break
		}
		gone = append(gone, recs[i].ID)
		recs = append(recs[:i:i], recs[i+1:]...)
	}
	if want := []string{"r", "f", "x"}; len(gone) != len(want) || gone[0] != want[0] || gone[1] != want[1] || gone[2] != want[2] {
		t.Fatalf("evicted %v, want %v (read, then failed and cancelled oldest first; unread, live and detached kept)", gone, want)
	}
	if Evict(recs, 1) < 0 || recs[Evict(recs, 1)].ID != "u1" {
		t.Fatal("among unread results the oldest goes")
	}
	if Evict(recs, 0) != -1 || Evict(nil, 1) != -1 {
		t.Fatal("no bound, or nothing to evict")
	}
}
