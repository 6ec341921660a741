package contract

import (
	"slices"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b       Order
		list, rows bool
	}{
		{"unfinished before finished", Order{State: observe.StateQueued, Seq: 1}, Order{State: observe.StateCompleted, Seq: 2}, true, true},
		{"newer first", Order{State: observe.StateRunning, Seq: 2}, Order{State: observe.StateRunning, Seq: 1}, true, true},
		{"unread result first in rows", Order{State: observe.StateCompleted, Seq: 1, ResultAvailable: true}, Order{State: observe.StateFailed, Seq: 2}, false, true},
		{"read result last", Order{State: observe.StateCompleted, Seq: 3, ResultAvailable: true, ResultRead: true}, Order{State: observe.StateQueued, Seq: 1}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.ListsBefore(tc.b); got != tc.list {
				t.Errorf("ListsBefore = %v", got)
			}
			if got := tc.a.RowsBefore(tc.b); got != tc.rows {
				t.Errorf("RowsBefore = %v", got)
			}
		})
	}
	for st, want := range map[observe.State]int{observe.StateFailed: 1, observe.StateRunning: 2, observe.StateCancelRequested: 2,
		observe.StateQueued: 3, observe.StateCancelled: 4, observe.StateCompleted: 4} {
		if got := (Order{State: st}).rowPriority(); got != want {
			t.Errorf("rowPriority(%v) = %d, want %d", st, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Order{Seq: 1}.ListsBefore(Order{Seq: 2}) }); n != 0 {
		t.Errorf("ListsBefore allocates %v", n)
	}
}

func TestElapsed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name                       string
		created, started, finished time.Time
		want                       time.Duration
	}{
		{"queued", t0, time.Time{}, time.Time{}, 10 * time.Second},
		{"running", t0, t0.Add(4 * time.Second), time.Time{}, 6 * time.Second},
		{"finished", t0, t0.Add(4 * time.Second), t0.Add(5 * time.Second), time.Second},
		{"clock behind", t0.Add(time.Hour), time.Time{}, time.Time{}, 0},
	} {
		if got := Elapsed(tc.created, tc.started, tc.finished, t0.Add(10*time.Second)); got != tc.want {
			t.Errorf("%s: Elapsed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEvictionRank(t *testing.T) {
	for _, tc := range []struct {
		state observe.State
		read  bool
		want  int
	}{
		{observe.StateCompleted, true, EvictRead},
		{observe.StateFailed, false, EvictUnwanted},
		{observe.StateCancelled, true, EvictUnwanted},
		{observe.StateCompleted, false, EvictUnread},
	} {
		if got := EvictionRank(tc.state, tc.read); got != tc.want {
			t.Errorf("EvictionRank(%s, %v) = %d, want %d", tc.state, tc.read, got, tc.want)
		}
	}
	if !(EvictRead < EvictUnwanted && EvictUnwanted < EvictUnread && EvictUnread < NumEvictRanks) {
		t.Error("the ranks are not in eviction order")
	}
}

// TestResultBytes: a Spec's bound lowers the engine's and bounds its Work
// when the engine has none; it never raises it.
func TestResultBytes(t *testing.T) {
	for _, tc := range []struct{ engine, spec, want int }{
		{100, 0, 100}, {100, 10, 10}, {100, 1000, 100}, {0, 0, 0}, {0, 10, 10}, {100, -1, 100},
	} {
		if got := ResultBytes(tc.spec, tc.engine); got != tc.want {
			t.Errorf("engine %d, spec %d: %d, want %d", tc.engine, tc.spec, got, tc.want)
		}
	}
}

func TestApprovalWait(t *testing.T) {
	for _, tc := range []struct{ timeout, want time.Duration }{
		{0, 24 * time.Hour}, {-time.Second, 24 * time.Hour}, {time.Minute, time.Minute},
	} {
		if got := ApprovalWait(tc.timeout); got != tc.want {
			t.Errorf("ApprovalWait(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}

func TestLimitDetail(t *testing.T) {
	for limit, want := range map[int]string{
		LimitDepth:       "nesting depth limit 3 reached",
		LimitOutstanding: "outstanding limit 3 reached for this owner",
		LimitStarts:      "starts limit 3 reached for this owner",
	} {
		if got := LimitDetail(limit, 3); got != want {
			t.Errorf("LimitDetail(%d, 3) = %q, want %q", limit, got, want)
		}
	}
}

// TestPollDelay: 1 s doubling to 30 s by default, back to the initial
// delay after progress; an unset Max is the Initial when that is longer
// than 30 s.
func TestPollDelay(t *testing.T) {
	var got []time.Duration
	d := time.Duration(0)
	for _, progress := range []bool{false, false, false, false, false, false, false, true} {
		d = PollDelay(0, 0, d, progress)
		got = append(got, d)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	if i, m := PollDelays(time.Minute, 0); i != time.Minute || m != time.Minute {
		t.Errorf("PollDelays(1m, 0) = %v, %v; want the Max raised to the Initial", i, m)
	}
	if d := PollDelay(time.Millisecond, 3*time.Millisecond, 2*time.Millisecond, false); d != 3*time.Millisecond {
		t.Errorf("capped delay = %v, want 3ms", d)
	}
}
