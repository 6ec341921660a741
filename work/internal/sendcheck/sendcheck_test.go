package sendcheck

import (
	"errors"
	"fmt"
	"testing"
)

// TestOfOrder pins the order of the checks over every combination of the
// facts: the verdict is the first of the contract's list (work/engine.go,
// Send: ErrNotAgent, ErrConflict, ErrTerminal, ErrMailboxFull, with a
// repeated command's first receipt before the Work's state) whose fact
// holds. Any two checks of Of swapped fail it.
func TestOfOrder(t *testing.T) {
	contract := []struct {
		holds func(Facts) bool
		v     Verdict
	}{
		{func(f Facts) bool { return f.NotAgent }, NotAgent},
		{func(f Facts) bool { return f.Recorded && f.OtherText }, Conflict},
		{func(f Facts) bool { return f.Recorded }, Repeat},
		{func(f Facts) bool { return f.Terminal }, Terminal},
		{func(f Facts) bool { return f.Full }, Full},
	}
	seen := map[Verdict]int{}
	for bits := range 1 << 5 {
		f := Facts{
			NotAgent:  bits&1 != 0,
			Recorded:  bits&2 != 0,
			OtherText: bits&4 != 0,
			Terminal:  bits&8 != 0,
			Full:      bits&16 != 0,
		}
		want := Accept
		for _, c := range contract {
			if c.holds(f) {
				want = c.v
				break
			}
		}
		if got := Of(f); got != want {
			t.Errorf("Of(%+v) = %v, want %v", f, got, want)
		}
		seen[want]++
	}
	// Every verdict is reached: 16 not an agent, 4 conflicts, 4 repeats,
	// 4 terminal, 2 full, 2 accepted.
	if fmt.Sprint(seen) != "map[accept:2 repeat:4 not an agent:16 conflict:4 terminal:4 full:2]" {
		t.Errorf("verdicts reached: %v", seen)
	}
	if s := Verdict(9).String(); s != "verdict(9)" {
		t.Errorf("Verdict(9) = %q", s)
	}
}

func TestReport(t *testing.T) {
	errA, errC, errT, errF := errors.New("a"), errors.New("c"), errors.New("t"), errors.New("f")
	mustPanic(t, "a non-refusal's error", func() {
		Report(map[Verdict]error{Repeat: errA, NotAgent: errA, Conflict: errC, Terminal: errT, Full: errF})
	})
	mustPanic(t, "a refusal left out", func() { Report(map[Verdict]error{NotAgent: errA, Conflict: errC, Terminal: errT}) })
	Report(map[Verdict]error{NotAgent: errA, Conflict: errC, Terminal: errT, Full: errF})
	for v, want := range map[Verdict]error{Accept: nil, Repeat: nil, NotAgent: errA, Conflict: errC, Terminal: errT, Full: errF} {
		if got := Err(v); got != want {
			t.Errorf("Err(%v) = %v, want %v", v, got, want)
		}
	}
	mustPanic(t, "a second Report", func() { Report(map[Verdict]error{NotAgent: errA, Conflict: errC, Terminal: errT, Full: errF}) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
