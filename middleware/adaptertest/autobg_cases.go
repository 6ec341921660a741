package adaptertest

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The opt-in departures from the crux contract, as the model sees them
// through the adapter: a call that moves to the background at its bound
// (Tool.AutoBackground) and background as a child's default
// (Tool.BackgroundByDefault).

const moveBound = 5 * time.Second

// toolDef returns the definition of the tool named name the request
// offers.
func toolDef(t *testing.T, req Request, name string) ToolDef {
	t.Helper()
	for _, d := range req.Tools {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("request %d offers no tool %s: %q", req.Index, name, req.ToolNames())
	return ToolDef{}
}

// reserved returns the run_in_background property of a tool's schema.
func reserved(t *testing.T, d ToolDef) map[string]any {
	t.Helper()
	props, _ := decodeSchema(t, d)["properties"].(map[string]any)
	p, _ := props["run_in_background"].(map[string]any)
	if p == nil {
		t.Fatalf("%s's schema has no run_in_background: %s", d.Name, d.Parameters)
	}
	return p
}

// autoBackground: only a child with the option says in its description
// that a call may return a work.ref after its bound, and its schema is a
// plain backgroundable child's; a call without run_in_background whose
// child still runs at the bound returns exactly its Work's work.ref at
// the bound, and the Work is then a running row of the status block and
// read with result; one whose child returns in time gives the exact
// output, and its Work is a read row, after the unfinished one, never an
// unread result.
func (s *suite) autoBackground(t *testing.T) {
	v := s.env(t)
	g := v.gate()
	fetch := g.tool("fetch", true)
	fetch.AutoBackground = moveBound
	quick := constChild("quick", true, exactOutput)
	quick.AutoBackground = moveBound
	p := v.puppetOf("coord", fetch, quick, constChild("plainbg", true, "x"))
	req := p.last
	for _, name := range []string{"fetch", "quick"} {
		if d := toolDef(t, req, name); !strings.Contains(d.Description, `A call without "run_in_background" that takes longer than 5 seconds returns a work.ref`) {
			t.Errorf("%s's description does not tell the model its bound: %q", name, d.Description)
		}
	}
	if d := toolDef(t, req, "plainbg"); strings.Contains(d.Description, "takes longer than") {
		t.Errorf("a child without the option tells of a bound: %q", d.Description)
	}
	if a, b := reserved(t, toolDef(t, req, "fetch")), reserved(t, toolDef(t, req, "plainbg")); !reflect.DeepEqual(a, b) {
		t.Errorf("run_in_background of a child with the option %v differs from a plain child's %v", a, b)
	}

	ids := p.send(Call{Name: "fetch", Arguments: argJSON(map[string]string{"input": "URL-1"})})
	if in := g.waitStarted(); in != "URL-1" {
		t.Errorf("the child got %q", in)
	}
	v.waitTimers(1) // the call waits for its bound
	v.clock.Advance(moveBound)
	id := refID(t, p.collect(ids...)[0], "fetch")
	if got, want := p.last.Last().Text, blockHead+"\n"+id+" | fetch | running | 5s | none\n"+blockFoot; got != want {
		t.Errorf("the block after the move:\n got %q\nwant %q", got, want)
	}

	if got := p.call("quick", map[string]string{"input": "Q"}); got != exactOutput {
		t.Errorf("a call that completes in time = %q, want the exact output", got)
	}
	block := p.last.Last().Text
	lines := strings.Split(block, "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], id+" | fetch | running | ") ||
		!strings.Contains(lines[2], " | quick | completed | ") {
		t.Errorf("the block after a call in time: %q; want the moved Work, then the completed and read one", block)
	}
	g.open(exactOutput, nil)
	if got := p.work("action", "result", "id", id); got != exactOutput {
		t.Errorf("result of the moved Work = %q", got)
	}
	p.finish()
}

// backgroundDefault: a child that runs in the background by default says
// so in its description and its schema (run_in_background defaults to
// true); a call without the field returns a work.ref at once, false
// returns the exact output.
func (s *suite) backgroundDefault(t *testing.T) {
	v := s.env(t)
	g := v.gate()
	fetch := g.tool("fetch", true)
	fetch.BackgroundByDefault = true
	p := v.puppetOf("coord", fetch)
	d := toolDef(t, p.last, "fetch")
	if !strings.Contains(d.Description, "runs in the background by default") {
		t.Errorf("the description does not say it runs in the background by default: %q", d.Description)
	}
	if r := reserved(t, d); r["default"] != true {
		t.Errorf("run_in_background does not default to true: %v", r)
	}
	id := refID(t, p.call("fetch", map[string]string{"input": "URL-1"}), "fetch")
	g.waitStarted()
	ids := p.send(Call{Name: "fetch", Arguments: argJSON(map[string]any{"input": "URL-2", "run_in_background": false})})
	g.waitStarted()
	g.open(exactOutput, nil)
	g.open(exactOutput, nil)
	if got := p.collect(ids...)[0]; got != exactOutput {
		t.Errorf("run_in_background false = %q, want the exact output", got)
	}
	if got := p.work("action", "result", "id", id); got != exactOutput {
		t.Errorf("result = %q", got)
	}
	p.finish()
}

// waitTimers waits until n timers are pending on the fake clock (the
// suite's only timers are result waits).
func (v *env) waitTimers(n int) {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := v.clock.BlockUntilContext(ctx, n); err != nil {
		v.t.Fatalf("%s: %d waits are not pending within %v (%d are)", v.s.a.Name, n, guard, v.clock.Pending())
	}
}
