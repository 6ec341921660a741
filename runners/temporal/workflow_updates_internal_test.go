package temporal

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// TestUpdateCarry: a Work's updates cross continue-as-new (its input,
// encoded as JSON) whole: the same updates in order, the same open
// questions and how the last ones closed, and the same decisions on what
// comes next (a repeat, a conflict, the count bound).
func TestUpdateCarry(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		steps  []string // r<key>: an update, q<key>: a question, a: an answer
		open   []int
		answer bool
	}{
		{"none open", []string{"ra", "qb", "a", "rc"}, nil, true},
		{"open after an answer", []string{"qa", "a", "rb", "qc", "qd"}, []int{3, 4}, true},
		{"all open", []string{"qa", "qb"}, []int{1, 2}, false},
		{"no questions", []string{"ra", "rb"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for _, s := range tc.steps {
				if s[0] != 'a' {
					n++
				}
			}
			p := work.UpdatePolicy{MaxUpdates: n} // full: the next one is over the bound
			w := &workRun{in: workInput{Updates: &p}}
			w.upd.log = driver.NewUpdateLog(p)
			for i, s := range tc.steps {
				at := t0.Add(time.Duration(i) * time.Second)
				switch s[0] {
				case 'a':
					w.upd.Answer(w.upd.log)
				default:
					q := s[0] == 'q'
					if len(w.upd.log.Open()) == 0 && q {
						w.upd.OpenedAt = at
					}
					if _, reason := w.upd.log.Accept(s[1:], []byte(fmt.Sprintf(`{"v":%q}`, s)), q, at); reason != "" {
						t.Fatalf("step %s refused: %s", s, reason)
					}
				}
			}
			b, err := json.Marshal(w.carryUpdates())
			if err != nil {
				t.Fatal(err)
			}
			var c updateCarry
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			next := &workRun{in: workInput{Updates: &p}}
			next.upd.log = driver.NewUpdateLog(p)
			next.restoreUpdates(&c)
			if got, want := next.upd.log.After(0), w.upd.log.After(0); !reflect.DeepEqual(got, want) {
				t.Fatalf("carried updates = %+v, want %+v", got, want)
			}
			if got := next.upd.log.Open(); !reflect.DeepEqual(got, tc.open) || !reflect.DeepEqual(got, w.upd.log.Open()) {
				t.Fatalf("open questions = %v, want %v", got, tc.open)
			}
			if next.upd.Answered != tc.answer || (len(tc.open) > 0 && !next.upd.OpenedAt.Equal(w.upd.OpenedAt)) {
				t.Fatalf("answered %v opened %s, want %v %s", next.upd.Answered, next.upd.OpenedAt, tc.answer, w.upd.OpenedAt)
			}
			first := w.upd.log.After(0)[0]
			if rec, reason := next.upd.log.Accept(first.Key, first.Value, first.Question, t0); reason != "" || !rec.Duplicate || rec.Seq != 1 {
				t.Fatalf("a repeat after the carry = %+v %q", rec, reason)
			}
			if _, reason := next.upd.log.Accept(first.Key, []byte(`0`), first.Question, t0); reason != observe.UpdateRefusedConflict {
				t.Fatalf("a conflict after the carry = %q", reason)
			}
			if _, reason := next.upd.log.Accept("new", []byte(`0`), false, t0); reason != observe.UpdateRefusedCount {
				t.Fatalf("over the bound after the carry = %q", reason)
			}
		})
	}
}
