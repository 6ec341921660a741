package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

const (
	blockHead = "[background work] id | target | state | elapsed | result"
	blockFoot = "(read results with the work tool's result action; status never includes output)"
)

// statusBlock: no block while the owner has no visible Work; then every
// coordinator request ends with exactly one block, a user message of its
// own, uncached, never in a system message and never kept in the history
// of later requests; at most 12 rows and "and N more"; nothing but ids,
// labels, states, elapsed times and result availability (no output,
// failure or guidance text); never in a child's request.
func (s *suite) statusBlock(t *testing.T) {
	v := s.env(t, work.WithMaxRunning(32), work.WithMaxOutstanding(32))
	k := v.kid("research")
	g := v.gate()
	p := v.puppetOf("coord", k.tool("research", true), g.tool("fetch", true), constChild("done", true, exactOutput), failBG("broken"))
	first := len(p.script.Requests())
	id := refID(t, p.call("research", bg("TASK")), "research")
	k.await()
	v.clock.Advance(2 * time.Second)
	p.call("research", `{"input":"FG","run_in_background":"bad"}`) // a request at t0+2s
	want := blockHead + "\n" + id + " | research | running | 2s | none\n" + blockFoot
	if got := p.last.Last().Text; got != want {
		t.Errorf("the block:\n got %q\nwant %q", got, want)
	}
	done := refID(t, p.call("done", bg("x")), "done")
	v.wait(done, observe.EventCompleted)
	broken := refID(t, p.call("broken", bg("x")), "broken")
	v.wait(broken, observe.EventFailed)
	p.work("action", "send", "id", id, "message", guideOne)
	block := p.last.Last().Text
	if !strings.Contains(block, done+" | done | completed | ") || !strings.HasSuffix(strings.Split(block, "\n")[rowOf(block, done)], " | available") {
		t.Errorf("the completed, unread Work's row: %q", block)
	}
	var calls []Call
	for range 11 {
		calls = append(calls, Call{Name: "fetch", Arguments: argJSON(bg("URL"))})
	}
	p.results(calls...) // 14 Works
	lines := strings.Split(p.last.Last().Text, "\n")
	if len(lines) != 12+3 || lines[len(lines)-2] != "and 2 more" {
		t.Errorf("the block of 14 Works has %d lines, want 12 rows, \"and 2 more\", head and foot: %q", len(lines), lines)
	}
	k.lookup()
	k.await()
	p.finish()

	for _, req := range p.script.Requests() {
		blocks := 0
		for i, m := range req.Messages {
			if !strings.Contains(m.Text, "[background work]") {
				continue
			}
			blocks++
			if i != len(req.Messages)-1 || m.Role != RoleUser || m.Cached {
				t.Errorf("request %d: a block in message %d of %d (%s, cached %t); want only the last, a user message, uncached",
					req.Index, i, len(req.Messages), m.Role, m.Cached)
			}
			if !strings.HasPrefix(m.Text, blockHead+"\n") || !strings.HasSuffix(m.Text, "\n"+blockFoot) {
				t.Errorf("request %d: the block is not exactly a block: %q", req.Index, m.Text)
			}
			for _, c := range []string{exactOutput, failureText, guideOne, "LOOKUP-RESULT"} {
				if strings.Contains(m.Text, c) {
					t.Errorf("request %d: the block carries content %q", req.Index, c)
				}
			}
		}
		if req.Index < first {
			if blocks != 0 {
				t.Errorf("request %d (no Work yet) has %d blocks", req.Index, blocks)
			}
		} else if blocks != 1 {
			t.Errorf("request %d has %d blocks, want 1", req.Index, blocks)
		}
	}
	for _, req := range k.script.Requests() {
		if strings.Contains(req.Text(), "[background work]") {
			t.Errorf("the child's request %d carries a status block", req.Index)
		}
	}
}

func rowOf(block, id string) int {
	for i, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, id+" | ") {
			return i
		}
	}
	return 0
}

// failBG is a backgroundable function child that fails with failureText.
func failBG(label string) Tool {
	return Tool{Kind: Function, Name: label, Description: "Fails.", Background: true,
		Func: func(context.Context, string) (string, error) { return "", errors.New(failureText) }}
}

// listOrder: list gives at most 50 projections, unfinished first, newest
// first.
func (s *suite) listOrder(t *testing.T) {
	v := s.env(t, work.WithMaxStarts(0), work.WithMaxOutstanding(100), work.WithMaxRunning(100))
	g := v.gate()
	p := v.puppetOf("coord", constChild("quick", true, "ok"), g.tool("hold", true))
	var finished, unfinished []string
	for range 30 {
		id := refID(t, p.call("quick", bg("x")), "quick")
		v.wait(id, observe.EventCompleted)
		finished = append(finished, id)
		unfinished = append(unfinished, refID(t, p.call("hold", bg("x")), "hold"))
	}
	var got []map[string]json.RawMessage
	out := p.work("action", "list")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("list is not a JSON array: %s", out)
	}
	if len(got) != 50 {
		t.Fatalf("list has %d entries, want 50", len(got))
	}
	var want []string
	for i := len(unfinished) - 1; i >= 0; i-- {
		want = append(want, unfinished[i])
	}
	for i := len(finished) - 1; len(want) < 50; i-- {
		want = append(want, finished[i])
	}
	keys := []string{"attachment", "attempt", "createdAt", "resultAvailable", "state", "targetLabel", "work"}
	for i, e := range got {
		var ref struct{ ID string }
		_ = json.Unmarshal(e["work"], &ref)
		if ref.ID != want[i] {
			t.Fatalf("entry %d is %s, want %s", i, ref.ID, want[i])
		}
		var have []string
		for k := range e {
			if k != "startedAt" && k != "finishedAt" {
				have = append(have, k)
			}
		}
		slices.Sort(have)
		if !slices.Equal(have, keys) {
			t.Fatalf("entry %d has fields %v, want %v (and the timestamps that apply)", i, have, keys)
		}
	}
	p.finish()
}
