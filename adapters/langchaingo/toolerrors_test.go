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

// TestToolsNeverReturnGoErrors: bad input, a launch refused by a limit and
// a failing or panicking foreground child come back as the error object,
// never as a Go error, so an executor running them is never aborted.
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
		{"work not JSON", "work", "list please", "invalid_input"},
		{"work no action", "work", `{}`, "missing_action"},
		{"work unknown action", "work", `{"action":"explode"}`, "unknown_action"},
		{"work no id", "work", `{"action":"status"}`, "missing_id"},
		{"work bad timeout", "work", `{"action":"result","id":"x","timeout":"soon"}`, "invalid_timeout"},
		{"work empty message", "work", `{"action":"send","id":"x","message":" "}`, "missing_message"},
		{"work unknown field", "work", `{"action":"list","verbose":true}`, "invalid_input"},
		{"child bad flag", "ok_job", `{"input":"x","run_in_background":"yes"}`, "invalid_child_input"},
		{"child wrong type", "ok_job", `{"input":3}`, "invalid_child_input"},
		{"child missing field", "typed", `{"run_in_background":true}`, "invalid_child_input"},
		{"child not an object", "typed", `hello`, "invalid_child_input"},
		{"child validation", "typed", `{"n":1,"run_in_background":true}`, "invalid_child_input"},
		{"foreground only", "failing", `{"input":"x","run_in_background":true}`, "invalid_child_input"},
		{"launch refused by a limit", "ok_job", `{"input":"y","run_in_background":true}`, "limit_exceeded"},
		{"failing child", "failing", `{"input":"x"}`, "child_failed"},
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
