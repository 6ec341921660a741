package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/boundary"
	"github.com/agentwork/agentwork/work/observe"
)

// The work tool's actions.
var actions = [...]string{"list", "status", "result", "cancel", "detach", "send"}

const workDescription = `Follow and control work you started with "run_in_background": true. ` +
	`Input: {"action": ..., "id"?: ..., "timeout"?: ..., "message"?: ...}. ` +
	`list: your work (at most 50), unfinished first. ` +
	`status: one work's state (needs id). ` +
	`result: the exact output once completed; otherwise waits up to timeout (default and cap 30s; a duration like "10s" or "30 seconds", or a number of seconds like 10) and returns the status (needs id). ` +
	`cancel: ask work to stop; it may still complete (needs id). ` +
	`detach: forget work without stopping it (needs id). ` +
	`send: queue guidance for an agent child, delivered before its next model request (needs id and message). ` +
	`Results come only through result: status never includes output or failure details.`

// workTool is the automatic work tool of a Kit.
type workTool struct{ set *Kit }

func (*workTool) Name() string        { return WorkToolName }
func (*workTool) Description() string { return workDescription }

// Schema returns the work tool's fixed input schema. timeout is declared
// as a string, its usual form, although a JSON number of seconds is also
// accepted: some providers' schema converters (langchaingo's googleai)
// refuse a list of types.
func (*workTool) Schema() map[string]any {
	enum := make([]any, len(actions))
	for i, a := range actions {
		enum[i] = a
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":  map[string]any{"type": "string", "enum": enum, "description": "What to do."},
			"id":      map[string]any{"type": "string", "description": "The work id (from a work.ref or list)."},
			"timeout": map[string]any{"type": "string", "description": `For result: how long to wait, a duration like "10s" or "30 seconds" (a number of seconds like 10 is also accepted); capped at and defaulting to 30s.`},
			"message": map[string]any{"type": "string", "description": "For send: the guidance text."},
		},
		"required":             []any{"action"},
		"additionalProperties": false,
	}
}

// workInput is the decoded work tool input.
type workInput struct {
	Action, ID, Message    string
	timeout                time.Duration // checked; meaningful when hasTimeout
	hasTimeout, hasMessage bool
}

const timeoutHint = `timeout must be a non-negative duration like "10s" or "30 seconds", or a number of seconds like 10`

// parseTimeout reads the timeout field: a duration string (ParseDuration)
// or a JSON number of seconds, with the same range as the string "<n>
// seconds" (non-negative, at most 1e9). wrongType reports a value that is
// neither a string nor a number.
func parseTimeout(raw json.RawMessage) (d time.Duration, wrongType bool, err error) {
	if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		// A JSON number (raw is valid JSON): the same rules as its spelled
		// form, so 5 is "5 seconds", 1e400 and -1 are refused.
		d, err = ParseDuration(string(raw) + " seconds")
		return d, false, err
	}
	var s string
	if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &s) != nil {
		return 0, true, nil
	}
	d, err = ParseDuration(s)
	return d, false, err
}

// parseWorkInput decodes and checks the shape of the work tool's input. It
// does not look anything up. On an error it returns what it decoded so
// far (Action is the model's string, perhaps not one of the six).
func parseWorkInput(raw string) (workInput, *ErrorObject) {
	var in workInput
	fail := func(code, msg string) (workInput, *ErrorObject) {
		e := errObj(code, msg)
		return in, &e
	}
	obj, _, ok, err := parseObject(raw)
	if err != nil || !ok {
		return fail(CodeInvalidInput, `input must be a JSON object like {"action":"list"}`)
	}
	fields := map[string]*string{"action": &in.Action, "id": &in.ID, "timeout": nil, "message": &in.Message}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same input always gets the same error
	for _, k := range keys {
		if _, known := fields[k]; !known {
			return fail(CodeInvalidInput, "unknown field "+quote(k)+"; allowed fields are action, id, timeout and message")
		}
	}
	var timeoutErr error
	for _, k := range keys {
		v := obj[k]
		if k == "timeout" {
			var wrongType bool
			if in.timeout, wrongType, timeoutErr = parseTimeout(v); wrongType {
				return fail(CodeInvalidInput, "field timeout must be a duration string or a number of seconds")
			}
			continue
		}
		if string(v) == "null" || json.Unmarshal(v, fields[k]) != nil {
			return fail(CodeInvalidInput, "field "+k+" must be a string")
		}
	}
	_, in.hasTimeout = obj["timeout"]
	_, in.hasMessage = obj["message"]
	if _, has := obj["action"]; !has || in.Action == "" {
		return fail(CodeMissingAction, "action is required: one of list, status, result, cancel, detach, send")
	}
	if !knownAction(in.Action) {
		return fail(CodeUnknownAction, "unknown action; use one of list, status, result, cancel, detach, send")
	}
	if in.Action != "list" && in.ID == "" {
		return fail(CodeMissingID, "action "+in.Action+" needs the id of a work")
	}
	if timeoutErr != nil {
		return fail(CodeInvalidTimeout, timeoutHint)
	}
	if in.Action == "send" && strings.TrimSpace(in.Message) == "" {
		return fail(CodeMissingMessage, "send needs a non-empty message")
	}
	return in, nil
}

// knownAction reports whether a is one of the six actions.
func knownAction(a string) bool {
	for _, k := range actions {
		if k == a {
			return true
		}
	}
	return false
}

// Call runs one action. It never returns a Go error. Input refused for
// one of the six actions (result without an id, ...) is reported to the
// Observer under that action with outcome invalid; any other refused input
// under the action "invalid", so no string the model wrote becomes a
// label. A nil ctx gets the error object with code nil_context. After the
// Kit's Release, list gets code released and the id actions
// {"status":"not_found"}, without asking the engine.
func (t *workTool) Call(ctx context.Context, raw string) (string, error) {
	if ctx == nil {
		return nilContext.JSON(), nil
	}
	s := t.set
	in, bad := parseWorkInput(raw)
	gone := s.released.Load()
	call := observe.ToolCall{Kind: observe.ToolCallAction, Tool: WorkToolName, Action: in.Action, CallID: CallID(ctx), Owner: s.owner.ID()}
	var unreachable error
	if bad != nil && !knownAction(in.Action) {
		call.Action = "invalid"
	} else if bad == nil && !gone {
		var ok bool
		if ok, unreachable = t.exists(ctx, in); ok {
			call.WorkID = in.ID
		}
	}
	ctx, end := s.obs.Begin(ctx, call)
	if bad != nil {
		end(observe.ToolCallEnd{Outcome: "invalid", ErrorClass: bad.Code})
		return bad.JSON(), nil
	}
	if unreachable != nil {
		// The engine did not answer the existence check: the action
		// would wait for it again (a remote engine's RPC timeout each).
		out, outcome, code := t.failed(unreachable)
		end(observe.ToolCallEnd{Outcome: outcome, ErrorClass: code})
		return out, nil
	}
	if gone {
		if in.Action == "list" {
			end(observe.ToolCallEnd{Outcome: "rejected", ErrorClass: CodeReleased})
			return released.JSON(), nil
		}
		end(observe.ToolCallEnd{Outcome: "not_found"})
		return notFound, nil
	}
	out, outcome, code := t.do(ctx, in)
	end(observe.ToolCallEnd{Outcome: outcome, ErrorClass: code})
	return out, nil
}

// exists reports whether the action names a Work that exists for the
// Kit's owner right now. Only then does the observer get the id: the
// string is the model's until the engine has recognised it, and an id
// that is unknown, another owner's or detached never reaches telemetry.
// err is the engine's work.ErrUnavailable when it could not tell (the
// action is then answered with it, without asking the engine again).
func (t *workTool) exists(ctx context.Context, in workInput) (bool, error) {
	if in.Action == "list" || !boundary.IsID(in.ID) {
		return false, nil
	}
	_, err := t.set.sup.Status(ctx, t.set.owner, in.ID)
	if errors.Is(err, work.ErrUnavailable) {
		return false, err
	}
	return err == nil, nil
}

// do performs a checked action and returns the output, the outcome (ok,
// not_found, rejected, invalid, timeout) and an error code.
func (t *workTool) do(ctx context.Context, in workInput) (out, outcome, code string) {
	s := t.set
	if in.Action == "list" {
		list, err := s.sup.List(ctx, s.owner)
		if err != nil {
			return t.failed(err)
		}
		return mustJSON(list), "ok", ""
	}
	if !boundary.IsID(in.ID) {
		return notFound, "not_found", ""
	}
	switch in.Action {
	case "status":
		st, err := s.sup.Status(ctx, s.owner, in.ID)
		if err != nil {
			return t.failed(err)
		}
		return mustJSON(st), "ok", ""
	case "result":
		timeout := work.MaxResultWait
		if in.hasTimeout {
			timeout = in.timeout // checked by parseWorkInput
		}
		st, output, err := s.sup.Result(ctx, s.owner, in.ID, timeout)
		if err != nil {
			return t.failed(err)
		}
		if st.State == work.StateCompleted {
			return output, "ok", ""
		}
		if !st.State.Terminal() {
			return mustJSON(st), "timeout", ""
		}
		return mustJSON(st), "ok", ""
	case "cancel":
		r, err := s.sup.Cancel(ctx, s.owner, in.ID)
		if err != nil {
			return t.failed(err)
		}
		if !r.Accepted {
			return mustJSON(r), "rejected", work.ErrTerminal.Code
		}
		return mustJSON(r), "ok", ""
	case "detach":
		r, err := s.sup.Detach(ctx, s.owner, in.ID)
		if err != nil {
			return t.failed(err)
		}
		return mustJSON(r), "ok", ""
	default: // send
		r, err := s.sup.Send(ctx, s.owner, in.ID, CallID(ctx), in.Message)
		if err != nil {
			return t.failed(err)
		}
		return mustJSON(r), "ok", ""
	}
}

func (t *workTool) failed(err error) (string, string, string) {
	if errors.Is(err, work.ErrNotFound) {
		return notFound, "not_found", ""
	}
	o := fromWork(err)
	return o.JSON(), "rejected", o.Code
}
