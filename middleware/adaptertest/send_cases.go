package adaptertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

const framedGuide = "[supervisor guidance] Your supervisor sent guidance while you work. Follow it within your task:\n1. " +
	guideOne + "\n2. " + guideTwo

// send: the receipt; idempotent per model tool-call id (the same id and
// message give the first receipt, the same id with another message a
// conflict); delivery at the child's next model request, in order, once,
// never into its call in flight; refusals for function children, terminal
// Work and an empty message.
func (s *suite) send(t *testing.T) {
	var g *gate
	sc := s.scenario(t, "running", func(v *env) []Tool { g = v.gate(); return []Tool{g.tool("fetch", true)} })
	p, id := sc.p, sc.id
	sendCall := func(callID, msg string) Call {
		return Call{ID: callID, Name: "work", Arguments: argJSON(obj("action", "send", "id", id, "message", msg))}
	}
	want1 := `{"workId":"` + id + `","id":"` + id + `.1","cursor":"1","acceptedAt":"` + iso(2*time.Second) + `","outcome":"accepted"}`
	if got := p.results(sendCall("send-1", guideOne))[0]; got != want1 {
		t.Fatalf("send:\n got %s\nwant %s", got, want1)
	}
	sc.v.clock.Advance(time.Second)
	if got := p.results(sendCall("send-1", guideOne))[0]; got != want1 {
		t.Errorf("send repeated with the same tool-call id: %s, want the first receipt %s", got, want1)
	}
	if got, want := p.results(sendCall("send-1", "something else"))[0], `{"error":{"code":"conflict","message":"command id was already used with a different message"}}`; got != want {
		t.Errorf("same tool-call id, another message: %s, want %s", got, want)
	}
	want2 := `{"workId":"` + id + `","id":"` + id + `.2","cursor":"2","acceptedAt":"` + iso(3*time.Second) + `","outcome":"accepted"}`
	if got := p.results(sendCall("send-2", guideTwo))[0]; got != want2 {
		t.Errorf("second send:\n got %s\nwant %s", got, want2)
	}
	if got := p.work("action", "send", "id", id, "message", "  "); errCode(got) != "missing_message" {
		t.Errorf("empty message: %s", got)
	}
	// The function child refuses guidance.
	fid := refID(t, p.call("fetch", bg("url")), "fetch") // queued behind research
	if got, want := p.work("action", "send", "id", fid, "message", "hurry"), `{"error":{"code":"not_agent","message":"guidance is accepted only by agent children"}}`; got != want {
		t.Errorf("send to a function child: %s, want %s", got, want)
	}

	// Delivery: the request in flight when it was sent has none; the next
	// ends with both, framed, in order; the one after has none again.
	k := sc.k
	if strings.Contains(k.last.Text(), "GUIDE-") {
		t.Errorf("guidance reached the child's call in flight")
	}
	k.lookup()
	req := k.await()
	last := req.Last()
	if last.Role != RoleUser || last.Text != framedGuide {
		t.Errorf("the child's next request ends with %s %q, want user %q", last.Role, last.Text, framedGuide)
	}
	for i, m := range req.Messages[:len(req.Messages)-1] {
		if strings.Contains(m.Text, "GUIDE-") {
			t.Errorf("guidance also in the child's message %d (%s)", i, m.Role)
		}
	}
	k.lookup()
	if req := k.await(); strings.Count(req.Text(), "[supervisor guidance]") > 1 || req.Last().Text == framedGuide {
		t.Errorf("guidance delivered twice: %q", req.Text())
	}
	k.reply(Text(exactOutput))
	sc.v.wait(id, observe.EventCompleted)
	if got, want := p.work("action", "send", "id", id, "message", "late"), `{"error":{"code":"terminal","message":"work is already terminal"}}`; got != want {
		t.Errorf("send to terminal Work: %s, want %s", got, want)
	}
	g.open("page", nil)
	// The coordinator's requests carry the guidance only in its own send
	// calls' arguments, never in a reply or its status block.
	for i, req := range p.script.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Text, "GUIDE-") {
				t.Errorf("coordinator request %d: a %s message carries guidance: %q", i, m.Role, m.Text)
			}
		}
	}
	p.finish()
}

// notFound: an unknown id (in any of its malformed forms) and another
// owner's id get exactly {"status":"not_found"} for every id action, and
// another owner's list is empty; nothing changes.
func (s *suite) notFound(t *testing.T) {
	sc := s.scenario(t, "running")
	p, id := sc.p, sc.id
	ids := map[string]string{
		"unknown":    "0123456789abcdef0123456789abcdef",
		"malformed":  "not-an-id",
		"padded":     " " + id,
		"prefix":     id[:31],
		"scope-like": "coord/" + id,
		"uppercase":  strings.ToUpper(id),
	}
	other := sc.v.kid("other")
	foreign := sc.v.puppetOf("stranger", other.tool("research", true))
	for _, action := range []string{"status", "result", "cancel", "detach", "send"} {
		in := func(x string) []string {
			if action == "send" {
				return []string{"action", action, "id", x, "message", "m"}
			}
			return []string{"action", action, "id", x, "timeout", "0s"}
		}
		for name, bad := range ids {
			if got := p.work(in(bad)...); got != notFound {
				t.Errorf("%s of an %s id: %s", action, name, got)
			}
		}
		if got := foreign.work(in(id)...); got != notFound {
			t.Errorf("%s by another owner: %s", action, got)
		}
	}
	if got := foreign.work("action", "list"); got != "[]" {
		t.Errorf("list by another owner: %s", got)
	}
	if got := p.work("action", "status", "id", id); got != sc.status {
		t.Errorf("status after the foreign calls:\n got %s\nwant %s", got, sc.status)
	}
	foreign.finish()
	p.finish()
}

// resultWait: a result of unfinished Work waits for the timeout (capped
// at 30 s, 30 s when omitted; a duration string or a number of seconds)
// and then returns the status; it returns the exact output as soon as the
// child completes; a failure is only a state.
func (s *suite) resultWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout any // nil: omitted
		wait    time.Duration
	}{
		{"omitted", nil, 30 * time.Second},
		{"45s capped", "45s", 30 * time.Second},
		{"2 minutes capped", "2 minutes", 30 * time.Second},
		{"10s", "10s", 10 * time.Second},
		{"1.5 seconds", "1.5 seconds", 1500 * time.Millisecond},
		{"number 10", 10, 10 * time.Second},
		{"number 45 capped", 45, 30 * time.Second},
		{"number 1e9 capped", 1e9, 30 * time.Second},
		{"number 0.25", 0.25, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := s.scenario(t, "running")
			args := map[string]any{"action": "result", "id": sc.id}
			if tc.timeout != nil {
				args["timeout"] = tc.timeout
			}
			ids := sc.p.send(Call{Name: "work", Arguments: argJSON(args)})
			sc.v.blockUntilWait()
			sc.v.clock.Advance(tc.wait - time.Millisecond)
			if n := sc.v.clock.Pending(); n != 1 {
				t.Fatalf("the wait ended before %v (pending timers %d)", tc.wait, n)
			}
			sc.v.clock.Advance(time.Millisecond)
			got := sc.p.collect(ids...)[0]
			if want := statusJSON(sc.id, "running", 0, 0, none, false); got != want {
				t.Fatalf("after the wait:\n got %s\nwant %s", got, want)
			}
			sc.p.finish()
		})
	}
	t.Run("CompletesDuringWait", func(t *testing.T) {
		sc := s.scenario(t, "running")
		ids := sc.p.send(Call{Name: "work", Arguments: argJSON(obj("action", "result", "id", sc.id, "timeout", "20s"))})
		sc.v.blockUntilWait()
		sc.k.reply(Text(exactOutput))
		if got := sc.p.collect(ids...)[0]; got != exactOutput {
			t.Fatalf("result = %q, want the exact output", got)
		}
		if n := sc.v.clock.Pending(); n != 0 {
			t.Errorf("the wait's timer was not stopped: %d pending", n)
		}
		if got := sc.p.work("action", "result", "id", sc.id); got != exactOutput {
			t.Errorf("a second result = %q, want the exact output again", got)
		}
		sc.p.finish()
	})
	t.Run("Failed", func(t *testing.T) {
		sc := s.scenario(t, "failed")
		if got := sc.p.work("action", "result", "id", sc.id); got != sc.status {
			t.Errorf("result of failed Work:\n got %s\nwant %s", got, sc.status)
		}
		sc.p.finish()
	})
}

// blockUntilWait waits until a result wait has set its timer.
func (v *env) blockUntilWait() {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := v.clock.BlockUntilContext(ctx, 1); err != nil {
		v.t.Fatalf("%s: no result wait started within %v", v.s.a.Name, guard)
	}
}

// errCode returns the code of an error object reply, or "".
func errCode(out string) string {
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if unmarshalStrict(out, &e) != nil || e.Error == nil || e.Error.Message == "" {
		return ""
	}
	return e.Error.Code
}
