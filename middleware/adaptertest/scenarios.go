package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// The suite's markers: child output and failure text that must reach the
// model only through an explicit result (output) or never (failure).
const (
	exactOutput = "EXACT-OUTPUT: {\"kind\":\"not a ref\"} ✓ \n  trailing  "
	failureText = "FAILURE-CANARY-7f3e secret failure text"
	guideOne    = "GUIDE-ONE-CANARY prefer primary sources"
	guideTwo    = "GUIDE-TWO-CANARY cite release dates"
	notFound    = `{"status":"not_found"}`
)

var refRE = regexp.MustCompile(`^\{"kind":"work\.ref","id":"([0-9a-f]{32})","targetId":"([^"]*)","guarantees":\{"execution":"process-local","rejoin":"process-local"\}\}$`)

// refID checks that out is exactly the work.ref JSON of a launch whose
// targetId is target and returns its id.
func refID(t *testing.T, out, target string) string {
	t.Helper()
	m := refRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("launch returned %q, want the exact work.ref JSON", out)
	}
	want := fmt.Sprintf(`{"kind":"work.ref","id":%q,"targetId":%q,"guarantees":{"execution":"process-local","rejoin":"process-local"}}`, m[1], target)
	if out != want {
		t.Fatalf("launch returned\n%s\nwant\n%s", out, want)
	}
	return m[1]
}

const none = -1

// statusJSON is the golden WorkStatus of the scenario child ("research",
// targetId "researcher-v1"); a negative duration leaves its timestamp out.
func statusJSON(id, state string, created, started, finished time.Duration, available bool) string {
	s := `{"work":{"kind":"work.ref","id":"` + id + `","targetId":"researcher-v1","guarantees":{"execution":"process-local","rejoin":"process-local"}},` +
		`"targetLabel":"research","state":"` + state + `","attachment":"attached","attempt":1,"createdAt":"` + iso(created) + `"`
	if started >= 0 {
		s += `,"startedAt":"` + iso(started) + `"`
	}
	if finished >= 0 {
		s += `,"finishedAt":"` + iso(finished) + `"`
	}
	return s + fmt.Sprintf(`,"resultAvailable":%t}`, available)
}

// scene is one Work of a puppet coordinator, left in a state with the
// clock at t0+2s.
type scene struct {
	v      *env
	p      *puppet
	k      *kid
	id     string
	state  string // the scenario's name
	status string // its golden status JSON
}

// final is the scene's state as the JSON writes it.
func (sc *scene) final() string {
	if sc.state == "cancelled-while-queued" {
		return "cancelled"
	}
	return sc.state
}

func (sc *scene) terminal() bool {
	switch sc.final() {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

var states = []string{"queued", "running", "cancel-requested", "completed", "failed", "cancelled", "cancelled-while-queued"}

// scenario prepares a coordinator with the backgroundable agent child
// "research" (targetId "researcher-v1") and extra tools, launches it and
// drives it to state. Engines have one running slot: a queued Work waits
// behind another owner's.
func (s *suite) scenario(t *testing.T, state string, extra ...func(*env) []Tool) *scene {
	t.Helper()
	v := s.env(t, work.WithMaxRunning(1))
	k := v.kid("research")
	research := k.tool("research", true)
	research.ID = "researcher-v1"
	tools := []Tool{research}
	for _, e := range extra {
		tools = append(tools, e(v)...)
	}
	p := v.puppetOf("coord", tools...)
	sc := &scene{v: v, p: p, k: k, state: state}
	launch := func() string { return refID(t, p.call("research", bg("TASK")), "researcher-v1") }
	cancel := func() {
		if r := decode(t, p.work("action", "cancel", "id", sc.id)); r["accepted"] != true {
			t.Fatalf("cancel of a %s Work not accepted: %v", state, r)
		}
	}
	switch state {
	case "queued", "cancelled-while-queued":
		blockSlot(v)
		v.clock.Advance(time.Second)
		sc.id = launch()
		if state == "cancelled-while-queued" {
			cancel()
		}
		v.clock.Advance(time.Second)
	case "running":
		sc.id = launch()
		k.await()
		v.clock.Advance(2 * time.Second)
	default:
		sc.id = launch()
		k.await()
		v.clock.Advance(time.Second)
		switch state {
		case "cancel-requested":
			cancel() // the child's model call is in flight: it stays cancel-requested
		case "completed":
			k.reply(Text(exactOutput))
			v.wait(sc.id, observe.EventCompleted)
		case "failed":
			k.reply(Fail(errors.New(failureText)))
			v.wait(sc.id, observe.EventFailed)
		case "cancelled":
			cancel()
			k.lookup() // the child's next model request is refused at the boundary
			v.wait(sc.id, observe.EventCancelled)
		}
		v.clock.Advance(time.Second)
	}
	switch state {
	case "queued":
		sc.status = statusJSON(sc.id, "queued", time.Second, none, none, false)
	case "running", "cancel-requested":
		sc.status = statusJSON(sc.id, state, 0, 0, none, false)
	case "completed":
		sc.status = statusJSON(sc.id, state, 0, 0, time.Second, true)
	case "failed", "cancelled":
		sc.status = statusJSON(sc.id, state, 0, 0, time.Second, false)
	case "cancelled-while-queued":
		sc.status = statusJSON(sc.id, "cancelled", time.Second, none, time.Second, false)
	}
	return sc
}

// blockSlot fills the engine's only running slot with another owner's
// Work, held until the test ends.
func blockSlot(v *env) {
	v.t.Helper()
	g := v.gate()
	_, err := v.sup.Start(context.Background(), work.Spec{Owner: work.NewOwner("slot-holder"),
		Target: work.Target{Label: "holder", Kind: work.KindFunction}, Input: "x",
		Run: func(ctx context.Context) (string, error) { return g.run(ctx, "x") }})
	if err != nil {
		v.t.Fatalf("Start: %v", err)
	}
	g.waitStarted()
}
