package middleware_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/enginetest"
	"github.com/agentwork/agentwork/work/observe"
)

// childSeeds are accepted forms of child input, added to the bad inputs.
var childSeeds = []string{
	`{"input":"x"}`,
	`{"input":"x","run_in_background":true}`,
	`{"input":"x","run_in_background":false}`,
	`{"__arg1":"{\"input\":\"x\",\"run_in_background\":true}"}`,
	`{"__arg1":"plain text"}`,
	`plain text`,
	`{"q":"cats","n":3,"run_in_background":true}`,
	`{"q":"<b>&</b>","n":1e2}`,
	`{"__arg1":"{\"__arg1\":\"{}\"}"}`,
	"  {\"input\":\"\\u0000\"} ",
	"\xff\xfe",
}

// FuzzChildInput: whatever the model sends a child tool, the tool never
// panics, never returns a Go error, and answers with the child's output, a
// work.ref, or one error object. Plain text reaches a string child
// unchanged.
func FuzzChildInput(f *testing.F) {
	for _, b := range badInputs {
		if b.tool != "work" {
			f.Add(b.input)
		}
	}
	for _, s := range childSeeds {
		f.Add(s)
	}
	for _, m := range malformedObjects {
		if len(m.input) < 1000 { // the deep one is too long a seed
			f.Add(m.input)
		}
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"q": map[string]any{"type": "string"},
			"n": map[string]any{"type": "integer"},
			"o": map[string]any{"type": "object"},
		},
		"required": []any{"q"},
	}
	echo := func(_ context.Context, in string) (string, error) { return "out:" + in, nil }
	f.Fuzz(func(t *testing.T, raw string) {
		rec := &enginetest.Recorder{}
		sup := work.New(work.WithDefaultBudget(work.Budget{MaxDuration: -1}), work.WithObserver(rec))
		defer func() {
			if err := sup.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}()
		s, err := middleware.Prepare(sup, work.NewOwner("coord"), map[string]any{
			"text":   middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo}),
			"obj":    middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: echo, Schema: schema}),
			"fg":     middleware.Child{Kind: work.KindAgent, Run: echo},
			"fgobj":  middleware.Child{Kind: work.KindAgent, Run: echo, Schema: schema},
			"strict": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: echo, Validate: func(string) error { return nil }}),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range s.Tools() {
			if tl.Name() == middleware.WorkToolName {
				continue
			}
			events := len(rec.Events())
			out, err := tl.Call(context.Background(), raw)
			if err != nil {
				t.Fatalf("%s: Go error %v", tl.Name(), err)
			}
			// Text that starts with '{' is exactly one JSON object or is
			// refused: it never runs as plain text.
			if trimmed := strings.TrimSpace(raw); strings.HasPrefix(trimmed, "{") && !json.Valid([]byte(trimmed)) {
				if !strings.Contains(out, `"code":"`+middleware.CodeChildInput+`"`) {
					t.Fatalf("%s: malformed object %q was not refused: %q", tl.Name(), raw, out)
				}
			}
			switch {
			case refRE.MatchString(out):
			case strings.HasPrefix(out, "out:"):
				plain := !strings.HasPrefix(strings.TrimSpace(raw), "{")
				if plain && (tl.Name() == "text" || tl.Name() == "fg") && out != "out:"+raw {
					t.Fatalf("%s: plain text %q reached the child as %q", tl.Name(), raw, out)
				}
				if plain && (tl.Name() == "obj" || tl.Name() == "fgobj") {
					t.Fatalf("%s: a schema child ran on plain text %q", tl.Name(), raw)
				}
				if tl.Name() == "obj" || tl.Name() == "fgobj" {
					var v map[string]any
					if err := json.Unmarshal([]byte(out[4:]), &v); err != nil {
						t.Fatalf("%s: the child got no JSON object: %q", tl.Name(), out)
					}
					if _, has := v[middleware.ReservedField]; has {
						t.Fatalf("%s: the child got the reserved field: %q", tl.Name(), out)
					}
				}
			default:
				var v struct {
					Error *middleware.ErrorObject `json:"error"`
				}
				dec := json.NewDecoder(strings.NewReader(out))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&v); err != nil || dec.More() || v.Error == nil || v.Error.Code == "" || v.Error.Message == "" {
					t.Fatalf("%s: output is neither the child's, a ref nor an error object: %q", tl.Name(), out)
				}
				if len(out) > 1024 {
					t.Fatalf("%s: a %d-byte error object", tl.Name(), len(out))
				}
				if v.Error.Code == middleware.CodeChildInput {
					// Earlier launches finish at any time, but a launch is
					// queued within its call. (A refused call's output is
					// the error object, so no foreground run happened.)
					for _, ev := range rec.Events()[events:] {
						if ev.Type == observe.EventQueued {
							t.Fatalf("%s: refused input %q started something: %+v", tl.Name(), raw, ev)
						}
					}
				}
			}
		}
	})
}

// instantClock answers every wait at once, so a fuzzed result action
// never blocks.
type instantClock struct{}

func (instantClock) Now() time.Time { return t0 }
func (instantClock) AfterFunc(_ time.Duration, f func()) func() bool {
	f()
	return func() bool { return false }
}

// workSeeds are accepted work tool inputs, added to the bad inputs. {run},
// {fn} and {done} are replaced by real ids.
var workSeeds = []string{
	`{"action":"list"}`,
	`{"action":"status","id":"{run}"}`,
	`{"action":"result","id":"{done}"}`,
	`{"action":"result","id":"{run}","timeout":"45s"}`,
	`{"action":"cancel","id":"{fn}"}`,
	`{"action":"detach","id":"{run}"}`,
	`{"action":"send","id":"{run}","message":"go on"}`,
	`{"__arg1":"{\"action\":\"status\",\"id\":\"{done}\"}"}`,
	`{"action":"result","id":"{run}","timeout":5}`,
	`{"action":"result","id":"{done}","timeout":1.5e0}`,
	`{"action":"status","id":"0123456789abcdef0123456789abcdef"}`,
	`{"action":"cancel","id":"{fn}","zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz":1}`,
}

const doneOutput = `"the completed child's output"`

// FuzzWorkToolInput: whatever the model sends the work tool, it never
// panics, never returns a Go error, and answers with valid JSON; the only
// output that carries a child's output is result on that completed Work.
func FuzzWorkToolInput(f *testing.F) {
	for _, b := range badInputs {
		if b.tool == "work" {
			f.Add(b.input)
		}
	}
	for _, s := range workSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		obs := newObserver()
		sup := work.New(work.WithClock(instantClock{}), work.WithDefaultBudget(work.Budget{MaxDuration: -1}), work.WithObserver(obs))
		hold := make(chan struct{})
		defer func() {
			close(hold)
			if err := sup.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}()
		blocked := func(ctx context.Context, _ string) (string, error) {
			select {
			case <-hold:
				return `"late"`, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		s, err := middleware.Prepare(sup, work.NewOwner("coord"), map[string]any{
			"agent": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: blocked}),
			"fn":    middleware.Backgroundable(middleware.Child{Kind: work.KindFunction, Run: blocked}),
			"done": middleware.Backgroundable(middleware.Child{Kind: work.KindAgent, Run: func(context.Context, string) (string, error) {
				return doneOutput, nil
			}}),
		})
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]middleware.Tool{}
		for _, tl := range s.Tools() {
			tools[tl.Name()] = tl
		}
		start := func(label string) string {
			ref, _ := tools[label].Call(context.Background(), `{"input":"x","run_in_background":true}`)
			m := refRE.FindStringSubmatch(ref)
			if m == nil {
				t.Fatalf("launch: %s", ref)
			}
			return m[1]
		}
		ids := map[string]string{"{done}": start("done")}
		obs.wait(ids["{done}"], observe.EventCompleted)
		ids["{run}"], ids["{fn}"] = start("agent"), start("fn")
		input := raw
		for ph, id := range ids {
			input = strings.ReplaceAll(input, ph, id)
		}
		ctx := middleware.WithCallID(context.Background(), "call-1")
		known := map[string]bool{}
		for _, id := range ids {
			known[id] = true
		}
		for range 2 { // a repeat must behave too
			calls := len(obs.Calls())
			out, err := tools[middleware.WorkToolName].Call(ctx, input)
			if err != nil {
				t.Fatalf("Go error %v", err)
			}
			if !json.Valid([]byte(out)) {
				t.Fatalf("invalid JSON %q for %q", out, input)
			}
			if strings.HasPrefix(out, `{"error"`) && len(out) > 1024 {
				t.Fatalf("a %d-byte error object for %q", len(out), input)
			}
			// The observer gets a work id only when it names one of the
			// owner's Works, never a string the model made up.
			for _, c := range obs.Calls()[calls:] {
				if c.Call.WorkID != "" && !known[c.Call.WorkID] {
					t.Fatalf("the observer got work id %q for %q", c.Call.WorkID, input)
				}
			}
			if strings.Contains(out, "the completed child") && (out != doneOutput || !strings.Contains(input, ids["{done}"])) {
				t.Fatalf("a child's output leaked: %q for %q", out, input)
			}
		}
	})
}
