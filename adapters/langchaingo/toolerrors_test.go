package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/agentwork/agentwork/adapters/langchaingo"
	"github.com/agentwork/agentwork/adapters/langchaingo/scripted"
	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
)

// TestToolsNeverReturnGoErrors: a Validate refusal and a panicking
// foreground child come back as the error object, never as a Go error, and
// a text agent's executor goes on after error objects. (Bad input, limits
// and failing children through a function-calling agent are the
// conformance suite's BadInput, Limits and Foreground cases.)
func TestToolsNeverReturnGoErrors(t *testing.T) {
	ctx := context.Background()
	sup := work.New(work.WithMaxStarts(1))
	defer closeSup(t, sup)
	ok := lc.NewFunction("ok_job", "Succeeds.", func(context.Context, string) (string, error) { return "fine", nil })
	failing := lc.NewFunction("failing", "Fails.", func(context.Context, string) (string, error) {
		return "", errors.New("SECRET failure text")
	})
	panicking := lc.NewFunction("panicking", "Panics.", func(context.Context, string) (string, error) { panic("SECRET panic") })
	typed := lc.NewFunction("typed", "Typed input.", func(context.Context, string) (string, error) { return "", nil },
		lc.WithSchema(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}),
		lc.WithValidate(func(string) error { return errors.New("n is out of range") }))
	kit, err := lc.Prepare(ctx, sup, scripted.New(), []tools.Tool{lc.Backgroundable(ok), failing, panicking, lc.Backgroundable(typed)})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Release()
	ts := kit.Tools()
	if out := callOK(t, ctx, toolNamed(t, ts, "ok_job"), `{"input":"x","run_in_background":true}`); refID(out, "ok_job") == "" {
		t.Fatalf("first launch = %s", out)
	}
	tests := []struct {
		name, tool, input, code string
	}{
		{"child validation", "typed", `{"n":1,"run_in_background":true}`, "invalid_child_input"},
		{"panicking child", "panicking", "x", "child_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := callOK(t, ctx, toolNamed(t, ts, tt.tool), tt.input)
			var e struct {
				Error middleware.ErrorObject `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("%s(%s) = %s, want error code %s", tt.tool, tt.input, out, tt.code)
			}
			if strings.Contains(out, "SECRET") {
				t.Errorf("error object leaks the child's failure: %s", out)
			}
		})
	}

	// In an executor: the run goes on after each of them.
	m := scripted.New(
		scripted.ReActCall("work", "list please"),
		scripted.ReActCall("failing", "x"),
		scripted.ReActCall("panicking", "x"),
		scripted.ReActCall("ok_job", `{"input":"z","run_in_background":true}`),
		scripted.ReActFinal("still here"),
	)
	kit2, err := lc.Prepare(ctx, sup, m, []tools.Tool{lc.Backgroundable(ok), failing, panicking}, lc.WithOwner("second"))
	if err != nil {
		t.Fatal(err)
	}
	defer kit2.Release()
	// The second owner has its own starts budget (1): use it up first so
	// the scripted launch is refused.
	callOK(t, ctx, toolNamed(t, kit2.Tools(), "ok_job"), `{"input":"w","run_in_background":true}`)
	out, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(kit2.Model(), kit2.Tools()), agents.WithMaxIterations(6)), "go")
	if err != nil || out != "still here" {
		t.Fatalf("run = %q, %v; want it to finish", out, err)
	}
	if text := m.Requests()[4].Text(); strings.Count(text, `Observation: {"error":{"code":`) != 4 {
		t.Errorf("the model did not see four error objects:\n%s", text)
	}
}
