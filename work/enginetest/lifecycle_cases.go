package enginetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
)

func (s *suite) lifecycle(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "life")
	ref, c := v.running(o, Agent, "")
	if !boundary.IsID(ref.ID) || ref.TargetID != Agent {
		t.Fatalf("Ref = %+v, want a 32-hex id and targetId %q", ref, Agent)
	}
	if ref.Durable != s.caps.Durable {
		t.Fatalf("Ref.Durable = %v, want %v", ref.Durable, s.caps.Durable)
	}
	pair := "process-local"
	if s.caps.Durable {
		pair = "durable"
	}
	b, _ := json.Marshal(ref)
	want := fmt.Sprintf(`{"kind":"work.ref","id":%q,"targetId":"agent","guarantees":{"execution":%q,"rejoin":%q}}`,
		ref.ID, pair, pair)
	if string(b) != want {
		t.Fatalf("ref JSON = %s, want %s", b, want)
	}
	st := v.status(o, ref.ID)
	if st.State != work.StateRunning || st.StartedAt.IsZero() || !st.FinishedAt.IsZero() || st.ResultAvailable ||
		st.TargetLabel != Agent || st.Work.ID != ref.ID || st.Work != ref {
		t.Fatalf("running status = %+v", st)
	}
	if st.CreatedAt.After(st.StartedAt) {
		t.Fatalf("createdAt %v after startedAt %v", st.CreatedAt, st.StartedAt)
	}
	v.finish(c, "the exact output\n with \"quotes\" ", nil)
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateCompleted || out != "the exact output\n with \"quotes\" " || !st.ResultAvailable || st.FinishedAt.IsZero() {
		t.Fatalf("completed: status %+v output %q", st, out)
	}
	var js map[string]any
	b, _ = json.Marshal(st)
	_ = json.Unmarshal(b, &js)
	if js["attachment"] != "attached" || js["attempt"] != float64(s.caps.Attempt) || js["state"] != "completed" ||
		js["startedAt"] == nil || js["finishedAt"] == nil || js["resultAvailable"] != true {
		t.Fatalf("status JSON = %s", b)
	}
	if strings.Contains(string(b), "exact output") {
		t.Fatalf("status JSON carries the output: %s", b)
	}
	// A result can be read again.
	if _, out2, err := v.e.Result(v.ctx, o, ref.ID, 0); err != nil || out2 != out {
		t.Fatalf("second read = %q, %v", out2, err)
	}
	if n := c.runs.Load(); n != 1 {
		t.Fatalf("the child ran %d times, want 1", n)
	}
	// An empty output is a valid result.
	ref2 := v.start(o, Echo, "")
	if st, out := v.settle(o, ref2.ID); st.State != work.StateCompleted || out != "" || !st.ResultAvailable {
		t.Fatalf("empty result: %+v %q", st, out)
	}
}

func (s *suite) childFailure(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "cf")
	ref, c := v.running(o, Func, "")
	v.finish(c, "partial output", errors.New("the canary failure text"))
	st, out := v.settle(o, ref.ID)
	if st.State != work.StateFailed || out != "" || st.ResultAvailable {
		t.Fatalf("failed child: %+v %q", st, out)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), "canary") || strings.Contains(string(b), "partial") {
		t.Fatalf("status carries failure content: %s", b)
	}
}

func (s *suite) foreground(t *testing.T) {
	v := s.env(t, nil)
	o := owner(t, "fg")
	out, err := v.e.Call(v.ctx, v.spec(o, Echo, "exact foreground output"))
	if err != nil || out != "exact foreground output" {
		t.Fatalf("Call = %q, %v", out, err)
	}
	token, c := newControl(t, "")
	go v.finish(c, "", errors.New("canary failure"))
	_, err = v.e.Call(v.ctx, v.spec(o, Func, token))
	wantErr(t, "Call(failing child)", err, work.ErrChildFailed)
	if strings.Contains(err.Error(), "canary") {
		t.Fatalf("foreground error carries the child's text: %v", err)
	}
	if l, _ := v.e.List(t.Context(), o); len(l) != 0 {
		t.Fatalf("a foreground call is listed: %+v", l)
	}
}
