package driver_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/driver"
	"github.com/agentwork/agentwork/work/observe"
)

// FuzzRegistryState decodes an owner's registry as a durable engine reads
// it back from its service (Temporal's payload, Restate's state), then
// makes every decision on it: never a panic or a hang, whatever the bytes
// hold (negative bounds, ids twice, unknown states, a pool over its
// limit); a registry that decodes encodes to JSON that decodes to the same
// registry; an admission it admits is found after.
func FuzzRegistryState(f *testing.F) {
	t0 := time.Unix(1700000000, 0).UTC()
	g := driver.Registry{}
	g.SetPool([3]int64{10, 0, 0})
	for i, id := range []string{"w_a", "w_b", "w_c"} {
		a := driver.Admission{Record: driver.Record{ID: id, Label: "research", Kind: work.KindAgent, Created: t0},
			MaxOutstanding: 8, Retain: 2, RetainAge: time.Hour, Want: [3]int64{1, 0, 0}, Eff: [3]int64{1, 0, 0}, Launch: "k" + id, Digest: "d"}
		g.Admit(a)
		if i < 2 {
			g.Transition(driver.Record{ID: id, Rev: 1, State: work.StateCompleted, Finished: t0.Add(time.Minute), HasResult: true, Spent: &observe.Usage{Turns: 1}})
		}
	}
	g.MarkRead("w_a")
	seed, err := json.Marshal(g)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"Records":[{"ID":"x","State":"completed"},{"ID":"x","State":"running"}],"Retain":-1,"Seq":-5}`))
	f.Add([]byte(`{"Records":[{"ID":"y","State":"nope","Held":[-1,-2,-3]}],"Pool":{"Limit":[-1,0,0],"Held":[9,9,9]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var g driver.Registry
		if json.Unmarshal(b, &g) != nil {
			return
		}
		enc, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("a decoded registry does not encode: %v", err)
		}
		var again driver.Registry
		if err := json.Unmarshal(enc, &again); err != nil {
			t.Fatalf("a registry's encoding does not decode: %v", err)
		}
		if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the registry:\n%s\n%s", enc, enc2)
		}
		now := t0.Add(2 * time.Hour)
		_ = driver.List(g.Visible())
		_, _ = driver.Rows(g.Visible(), now)
		_ = driver.Settled(g.Visible())
		_ = driver.AwaitingApproval(g.Visible())
		_ = driver.Live(g.Records)
		a := driver.Admission{Record: driver.Record{ID: "w_new", Label: "research", Kind: work.KindFunction, Created: now},
			MaxOutstanding: 4, MaxStarts: 8, Retain: 2, Want: [3]int64{1, 0, 0}, Eff: [3]int64{1, 0, 0}, Function: true, Launch: "knew", Digest: "d"}
		if d := g.Decide(a); d.Again == nil && d.Replay == nil && d.Refusal == nil {
			g.Admit(a)
			if g.Find("w_new") < 0 {
				t.Fatal("an admitted Work is not found")
			}
		}
		for _, r := range append([]driver.Record(nil), g.Records...) {
			g.Transition(driver.Record{ID: r.ID, Rev: r.Rev + 1, State: work.StateFailed, Class: work.ClassError, Finished: now})
			g.MarkRead(r.ID)
			g.Detach(r.ID)
		}
		g.Expire(now.Add(24 * time.Hour))
		g.Forget("w_new")
	})
}
