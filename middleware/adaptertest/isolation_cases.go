package adaptertest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// coordinatorOnly is what no child may see of its coordinator.
var coordinatorOnly = []string{"COORDINATOR-INSTRUCTION", "COORDINATOR-TASK", "secret_tool", "run_in_background",
	"[background work]", "Follow and control work"}

// isolation: a child, foreground or background, sees only its own prompt,
// tools and declared input: none of the coordinator's instruction, task,
// history or tools (so no work tool: no control authority), and none of
// the values of the coordinator's run context.
func (s *suite) isolation(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(map[bool]string{false: "foreground", true: "background"}[background], func(t *testing.T) {
			v := s.env(t)
			k := v.kid("research")
			g := v.gate()
			var mu sync.Mutex
			var coordSaw []any
			secret := Tool{Kind: Plain, Name: "secret_tool", Description: "The coordinator's own tool.",
				Func: func(ctx context.Context, _ string) (string, error) {
					mu.Lock()
					coordSaw = append(coordSaw, ctx.Value(turnKey{}))
					mu.Unlock()
					return "SECRET-TOOL-OUTPUT", nil
				}}
			p := v.puppetOf("coord", secret, k.tool("research", background), g.tool("fetch", background))
			p.call("secret_tool", `{"q":"x"}`)
			args := func(in string) string {
				if background {
					return argJSON(bg(in))
				}
				return argJSON(map[string]any{"input": in})
			}
			ids := p.send(Call{Name: "research", Arguments: args("CHILD-INPUT")})
			req := k.await()
			k.lookup()
			req2 := k.await()
			k.reply(Text("child done"))
			out := p.collect(ids...)[0]
			ids = p.send(Call{Name: "fetch", Arguments: args("CHILD-INPUT-F")})
			if in := g.waitStarted(); in != "CHILD-INPUT-F" {
				t.Errorf("the function child got %q", in)
			}
			g.open("fetched", nil)
			fout := p.collect(ids...)[0]
			if background {
				v.wait(refID(t, out, "research"), observe.EventCompleted)
				v.wait(refID(t, fout, "fetch"), observe.EventCompleted)
			}
			p.finish()

			mu.Lock()
			if len(coordSaw) != 1 || coordSaw[0] != "COORDINATOR-CONTEXT-VALUE" {
				t.Fatalf("the coordinator's own tool saw %v: the adapter does not pass Run's context to its tools", coordSaw)
			}
			mu.Unlock()
			for _, r := range []Request{req, req2} {
				if names := r.ToolNames(); len(names) != 1 || names[0] != "lookup" {
					t.Errorf("the child's request %d offers %v, want only its own lookup", r.Index, names)
				}
				for _, c := range coordinatorOnly {
					if strings.Contains(r.Text(), c) {
						t.Errorf("the child's request %d carries the coordinator's %q", r.Index, c)
					}
				}
				users := 0
				for _, m := range r.Messages {
					switch m.Role {
					case RoleSystem:
						if m.Text != "CHILD-INSTRUCTION research" {
							t.Errorf("the child's system message is %q, want its own instruction", m.Text)
						}
					case RoleUser:
						users++
						if m.Text != "CHILD-INPUT" {
							t.Errorf("the child's user message is %q, want only its input", m.Text)
						}
					}
				}
				if users != 1 {
					t.Errorf("the child's request %d has %d user messages, want 1", r.Index, users)
				}
			}
			k.mu.Lock()
			if len(k.seen) != 1 || k.seen[0] != nil {
				t.Errorf("the agent child's tool saw the coordinator's context value: %v", k.seen)
			}
			k.mu.Unlock()
			g.mu.Lock()
			if len(g.seen) != 1 || g.seen[0] != nil {
				t.Errorf("the function child saw the coordinator's context value: %v", g.seen)
			}
			g.mu.Unlock()
		})
	}
}

// limits: a launch the engine refuses (outstanding, starts) and an output
// over the limit give one error object (a background output over the
// limit fails the Work, visible only as its state), never a Go error that
// ends the run; nothing is started.
func (s *suite) limits(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  work.Option
	}{
		{"outstanding", work.WithMaxOutstanding(2)},
		{"starts", work.WithMaxStarts(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := s.env(t, tc.opt)
			g := v.gate()
			p := v.puppetOf("coord", g.tool("fetch", true))
			refID(t, p.call("fetch", bg("a")), "fetch")
			refID(t, p.call("fetch", bg("b")), "fetch")
			got := p.call("fetch", bg("c"))
			if errCode(got) != work.ErrLimit.Code {
				t.Errorf("the launch over the %s limit = %s, want error code %s", tc.name, got, work.ErrLimit.Code)
			}
			var l []any
			if err := json.Unmarshal([]byte(p.work("action", "list")), &l); err != nil || len(l) != 2 {
				t.Errorf("after the refused launch the owner has %d Works, want 2", len(l))
			}
			p.finish()
		})
	}
	t.Run("output", func(t *testing.T) {
		v := s.env(t, work.WithMaxResultBytes(16))
		big := strings.Repeat("BIG-OUTPUT-", 10)
		p := v.puppetOf("coord", constChild("big", true, big))
		if got := p.call("big", `{"input":"x"}`); errCode(got) == "" || strings.Contains(got, "BIG-OUTPUT") {
			t.Errorf("a foreground output over the limit = %s, want one error object without it", got)
		}
		id := refID(t, p.call("big", bg("x")), "big")
		v.wait(id, observe.EventFailed)
		if got := p.work("action", "result", "id", id); !strings.Contains(got, `"state":"failed"`) || strings.Contains(got, "BIG-OUTPUT") {
			t.Errorf("result of a background output over the limit = %s", got)
		}
		p.finish()
	})
}

// unmarshalStrict decodes exactly one JSON value into v, refusing unknown
// fields.
func unmarshalStrict(s string, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errTrailing
	}
	return nil
}

var errTrailing = errorString("trailing data")
