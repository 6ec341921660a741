package driver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// logT0 is the time the update log tests accept at.
var logT0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// TestUpdateLog: the decision on each update, in its documented order, and
// reading by cursor.
func TestUpdateLog(t *testing.T) {
	now := logT0
	l := driver.NewUpdateLog(work.UpdatePolicy{MaxUpdates: 3, MaxBytes: 10})
	if p := l.Policy(); p.MaxUpdates != 3 || p.MaxBytes != 10 || p.QuestionTimeout != 10*time.Minute {
		t.Fatalf("Policy() = %+v", p)
	}
	steps := []struct {
		key, value string
		question   bool
		seq        int
		dup        bool
		refusal    string
	}{
		{"a", `1`, false, 1, false, ""},
		{"", `1`, false, 0, false, observe.UpdateRefusedInvalid},
		{"b", `{`, false, 0, false, observe.UpdateRefusedInvalid},
		{"b", ``, false, 0, false, observe.UpdateRefusedInvalid},
		{"a", `1`, false, 1, true, ""},
		{"a", `2`, false, 0, false, observe.UpdateRefusedConflict},
		{"a", `1`, true, 0, false, observe.UpdateRefusedConflict}, // a question is another payload
		{"b", `"12345678"`, false, 0, false, observe.UpdateRefusedBytes},
		{"b", `"123456"`, true, 2, false, ""},
		{"c", `[1]`, false, 0, false, observe.UpdateRefusedBytes}, // 9 + 3 > 10
		{"c", `0`, false, 3, false, ""},
		{"d", `0`, false, 0, false, observe.UpdateRefusedCount},
		{"c", `0`, false, 3, true, ""}, // a repeat even at the bound
	}
	for i, st := range steps {
		rec, refusal := l.Accept(st.key, []byte(st.value), st.question, now.Add(time.Duration(i)*time.Second))
		if refusal != st.refusal || rec.Seq != st.seq || rec.Duplicate != st.dup {
			t.Fatalf("step %d Accept(%q, %s, %v) = %+v, %q; want seq %d dup %v refusal %q",
				i, st.key, st.value, st.question, rec, refusal, st.seq, st.dup, st.refusal)
		}
	}
	if l.Len() != 3 || l.Bytes() != 1+8+1 {
		t.Fatalf("Len, Bytes = %d, %d; want 3, 10", l.Len(), l.Bytes())
	}
	all := l.After(0)
	if len(all) != 3 || all[0].Key != "a" || all[1].Key != "b" || !all[1].Question || all[2].Key != "c" ||
		!all[1].Time.Equal(now.Add(8*time.Second)) {
		t.Fatalf("After(0) = %+v", all)
	}
	all[0].Value[0] = 'X' // a copy: the log keeps its own
	if got := string(l.After(0)[0].Value); got != "1" {
		t.Fatalf("the log's value changed through After's copy: %q", got)
	}
	if got := l.After(2); len(got) != 1 || got[0].Seq != 3 {
		t.Fatalf("After(2) = %+v", got)
	}
	if got := l.After(3); got == nil || len(got) != 0 {
		t.Fatalf("After(3) = %#v, want an empty slice", got)
	}
	if got := l.Open(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("Open() = %v, want [2]", got)
	}
	if got := l.Answered(); len(got) != 1 || got[0] != 2 || l.Open() != nil || l.Answered() != nil {
		t.Fatalf("Answered() = %v, then Open() = %v", got, l.Open())
	}

	// Ending refuses new updates; a repeat still gets its receipt.
	l2 := driver.NewUpdateLog(work.UpdatePolicy{})
	l2.Accept("k", []byte(`true`), false, now)
	l2.End()
	if _, r := l2.Accept("n", []byte(`true`), false, now); r != observe.UpdateRefusedEnding {
		t.Fatalf("Accept after End = %q, want ending", r)
	}
	if rec, r := l2.Accept("k", []byte(`true`), false, now); r != "" || !rec.Duplicate {
		t.Fatalf("a repeat after End = %+v, %q", rec, r)
	}

	// A nil log declares nothing.
	var nl *driver.UpdateLog
	if _, r := nl.Accept("k", []byte(`1`), false, now); r != observe.UpdateRefusedNotDeclared {
		t.Fatalf("nil log Accept = %q", r)
	}
	if nl.Len() != 0 || nl.Bytes() != 0 || nl.Open() != nil || nl.Answered() != nil || len(nl.After(0)) != 0 {
		t.Fatal("a nil log holds something")
	}
	nl.End()
}

// TestUpdateLogState: a log restored from its State (through JSON, as a
// durable engine carries it) decides every later update as the original.
func TestUpdateLogState(t *testing.T) {
	l := driver.NewUpdateLog(work.UpdatePolicy{MaxUpdates: 3, MaxBytes: 64})
	l.Accept("a", []byte(`{"x":1}`), false, logT0)
	l.Accept("q", []byte(`"why?"`), true, logT0.Add(time.Second))
	raw, err := json.Marshal(l.State())
	if err != nil {
		t.Fatal(err)
	}
	var st driver.UpdateLogState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	r := driver.RestoreUpdateLog(st)
	if fmt.Sprint(r.Open()) != "[2]" || r.Len() != 2 || r.Bytes() != l.Bytes() || r.Policy() != l.Policy() {
		t.Fatalf("restored: open %v len %d bytes %d policy %+v", r.Open(), r.Len(), r.Bytes(), r.Policy())
	}
	for _, lg := range []*driver.UpdateLog{l, r} {
		if rec, ref := lg.Accept("a", []byte(`{"x":1}`), false, logT0); ref != "" || !rec.Duplicate || rec.Seq != 1 {
			t.Fatalf("repeat = %+v, %q", rec, ref)
		}
		if _, ref := lg.Accept("a", []byte(`{"x":2}`), false, logT0); ref != observe.UpdateRefusedConflict {
			t.Fatalf("conflict = %q", ref)
		}
		if rec, ref := lg.Accept("b", []byte(`1`), false, logT0); ref != "" || rec.Seq != 3 {
			t.Fatalf("third = %+v, %q", rec, ref)
		}
		if _, ref := lg.Accept("c", []byte(`1`), false, logT0); ref != observe.UpdateRefusedCount {
			t.Fatalf("fourth = %q", ref)
		}
	}
	if a, b := seqsOf(l.After(0)), seqsOf(r.After(0)); a != b {
		t.Fatalf("original %s, restored %s", a, b)
	}
	l.End()
	if r2 := driver.RestoreUpdateLog(l.State()); !func() bool {
		_, ref := r2.Accept("z", []byte(`1`), false, logT0)
		return ref == observe.UpdateRefusedEnding
	}() {
		t.Fatal("a restored ending log accepts updates")
	}
	if st := (*driver.UpdateLog)(nil).State(); st.Updates != nil || st.Policy != (work.UpdatePolicy{}) {
		t.Fatalf("nil log State = %+v", st)
	}
}

func seqsOf(us []work.Update) string {
	var b strings.Builder
	for _, u := range us {
		fmt.Fprintf(&b, "%d:%s=%s?%v@%s ", u.Seq, u.Key, u.Value, u.Question, u.Time.Format(time.RFC3339))
	}
	return b.String()
}

// TestMisuseUpdateLog: a nil *UpdateLog is the log of a Work that declares
// no updates (refuses with UpdateRefusedNotDeclared, holds nothing); the
// zero UpdateLog does not panic.
func TestMisuseUpdateLog(t *testing.T) {
	for name, l := range map[string]*driver.UpdateLog{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			enginetest.NoHang(t, name, func() {
				_, reason := l.Accept("k", []byte(`1`), true, time.Time{})
				if name == "nil" && reason != observe.UpdateRefusedNotDeclared {
					t.Errorf("Accept reason = %q, want %q", reason, observe.UpdateRefusedNotDeclared)
				}
				_ = l.After(0)
				_, _ = l.Len(), l.Bytes()
				_, _ = l.Open(), l.Answered()
				_ = l.State()
				_ = l.Policy()
				l.End()
			})
		})
	}
}

// FuzzUpdateLog offers a child's updates (the idempotency key and the
// encoded value a durable runner's worker hands over) to a small log:
// never a panic; what is accepted has a key and is valid JSON, within the
// log's count and byte bounds; a refusal changes nothing; a repeat gets
// the first receipt; what After returns equals what was accepted and is a
// copy.
func FuzzUpdateLog(f *testing.F) {
	f.Add("k1", []byte(`{"step":1}`), false, "k2", []byte(`"two"`), true)
	f.Add("k1", []byte(`{"step":1}`), false, "k1", []byte(`{"step":2}`), false)
	f.Add("", []byte(`1`), false, "k", []byte(`{`), true)
	f.Add("k", []byte(`"`+strings.Repeat("x", 80)+`"`), false, "k2", []byte(`null`), false)
	f.Fuzz(func(t *testing.T, k1 string, v1 []byte, q1 bool, k2 string, v2 []byte, q2 bool) {
		policy := work.UpdatePolicy{MaxUpdates: 2, MaxBytes: 64}
		l := driver.NewUpdateLog(policy)
		type offer struct {
			key      string
			value    []byte
			question bool
		}
		var accepted []offer
		now := time.Unix(0, 0)
		for _, o := range []offer{{k1, v1, q1}, {k2, v2, q2}, {k1, v1, q1}} {
			before := l.After(0)
			r, refused := l.Accept(o.key, o.value, o.question, now)
			after := l.After(0)
			if refused != "" {
				if len(after) != len(before) {
					t.Fatalf("refused %q, yet the log went from %d to %d updates", refused, len(before), len(after))
				}
				continue
			}
			if o.key == "" || !json.Valid(o.value) {
				t.Fatalf("accepted key %q value %q", o.key, o.value)
			}
			if r.Duplicate {
				if r.Seq < 1 || r.Seq > len(accepted) || accepted[r.Seq-1].key != o.key {
					t.Fatalf("duplicate receipt %+v for key %q; accepted %v", r, o.key, accepted)
				}
				continue
			}
			accepted = append(accepted, o)
			if r.Seq != len(accepted) {
				t.Fatalf("receipt seq %d; want %d", r.Seq, len(accepted))
			}
		}
		got := l.After(0)
		if len(got) != len(accepted) || len(got) > policy.MaxUpdates {
			t.Fatalf("After(0) holds %d updates; accepted %d (at most %d)", len(got), len(accepted), policy.MaxUpdates)
		}
		size := 0
		for i, u := range got {
			a := accepted[i]
			if u.Seq != i+1 || u.Key != a.key || !bytes.Equal(u.Value, a.value) || u.Question != a.question {
				t.Fatalf("update %d = %+v; accepted %q %q %v", i, u, a.key, a.value, a.question)
			}
			size += len(u.Value)
			if len(u.Value) > 0 {
				u.Value[0] ^= 0xff // a copy: the log must not change
			}
		}
		if size > policy.MaxBytes {
			t.Fatalf("the log holds %d bytes; bound %d", size, policy.MaxBytes)
		}
		for i, u := range l.After(0) {
			if !bytes.Equal(u.Value, accepted[i].value) {
				t.Fatal("changing what After returned changed the log")
			}
		}
	})
}

// TestUpdateLogStateEncoding: the stored form is the one work.UpdateLogState
// had (the runners' stored state and carried histories hold it).
func TestUpdateLogStateEncoding(t *testing.T) {
	l := driver.NewUpdateLog(work.UpdatePolicy{MaxUpdates: 3, MaxBytes: 64})
	l.Accept("q", []byte(`{"x":1}`), true, logT0)
	raw, err := json.Marshal(l.State())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"policy":{"MaxUpdates":3,"MaxBytes":64,"QuestionTimeout":600000000000},` +
		`"updates":[{"Seq":1,"Key":"q","Value":"eyJ4IjoxfQ==","Question":true,"Time":"2026-12-02T00:00:00Z"}],"open":[1]}`
	if string(raw) != want {
		t.Fatalf("State encodes as\n%s\nwant\n%s", raw, want)
	}
}
