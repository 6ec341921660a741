package driver

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestQuestions: a question opens the wait once (a second one joins it, a
// repeat opens nothing), an answer closes it answered and a timeout of
// its generation unanswered; a timeout of a generation already closed
// changes nothing and tells how it closed; a Work that is ending refuses
// new updates but answers a repeat.
func TestQuestions(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	l := NewUpdateLog(work.UpdatePolicy{QuestionTimeout: time.Minute})
	var q Questions
	report := func(key string, question bool, st observe.State) (work.UpdateReceipt, string, bool) {
		t.Helper()
		r, opens := q.Report(l, st, key, []byte(`{"k":"`+key+`"}`), question, t0)
		return work.UpdateReceipt{Seq: r.Seq, Duplicate: r.Duplicate}, r.Reason, opens
	}
	if _, reason, opens := report("a", false, work.StateRunning); reason != "" || opens {
		t.Fatalf("an update: %q opens %v", reason, opens)
	}
	if _, reason, opens := report("q1", true, work.StateRunning); reason != "" || !opens {
		t.Fatalf("the first question: %q opens %v", reason, opens)
	}
	if rec, reason, opens := report("q1", true, work.StateRunning); reason != "" || !rec.Duplicate || opens {
		t.Fatalf("a repeated question: %+v %q opens %v", rec, reason, opens)
	}
	if _, reason, opens := report("q2", true, work.StateRunning); reason != "" || opens {
		t.Fatalf("a second open question: %q opens %v", reason, opens)
	}
	q.OpenedAt = t0
	if d := q.Deadline(l); !d.Equal(t0.Add(time.Minute)) {
		t.Fatalf("deadline %s", d)
	}
	if !q.Answer(l) || q.Gen != 1 || !q.Answered || len(l.Open()) != 0 {
		t.Fatalf("answer: %+v open %v", q, l.Open())
	}
	if q.Answer(l) || q.Gen != 1 {
		t.Fatalf("an answer with none open: %+v", q)
	}
	// The wait of generation 0 gives up after the answer: nothing changes.
	if answered, closed := q.TimeOut(l, 0); !answered || closed || q.Gen != 1 {
		t.Fatalf("a late timeout: answered %v closed %v %+v", answered, closed, q)
	}
	if _, _, opens := report("q3", true, work.StateRunning); !opens {
		t.Fatal("a question after an answer does not open the wait")
	}
	if answered, closed := q.TimeOut(l, 1); answered || !closed || q.Gen != 2 || q.Answered || len(l.Open()) != 0 {
		t.Fatalf("timeout: answered %v closed %v %+v open %v", answered, closed, q, l.Open())
	}
	for _, st := range []observe.State{work.StateCancelRequested, work.StateCompleted} {
		if _, reason, opens := report("late-"+string(st), true, st); reason != observe.UpdateRefusedEnding || opens {
			t.Fatalf("%s: %q opens %v", st, reason, opens)
		}
		if rec, reason, _ := report("a", false, st); reason != "" || !rec.Duplicate || rec.Seq != 1 {
			t.Fatalf("%s, a repeat: %+v %q", st, rec, reason)
		}
	}
	// The stored names: a Restate control object's state embeds it.
	b, err := json.Marshal(struct{ Questions }{Questions{Gen: 2}})
	if err != nil || string(b) != `{"Gen":2,"Answered":false}` {
		t.Fatalf("json %s %v", b, err)
	}
}
