package middleware_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentwork/agentwork/middleware"
	"github.com/agentwork/agentwork/work"
	"github.com/agentwork/agentwork/work/observe"
)

// TestUpdateToolRefusals: emit_update answers bad input, a nil ctx and a
// context that is no child's with a refusal object, never a Go error.
func TestUpdateToolRefusals(t *testing.T) {
	tool := middleware.UpdateTool()
	tests := []struct {
		name, input, code, reason string
		nilCtx                    bool
	}{
		{name: "nil ctx", input: `{"value":1}`, code: middleware.CodeNilContext, nilCtx: true},
		{name: "not an object", input: `"hello"`, code: middleware.CodeInvalidInput},
		{name: "no value", input: `{"question":true}`, code: middleware.CodeInvalidInput},
		{name: "question not a boolean", input: `{"value":1,"question":"yes"}`, code: middleware.CodeInvalidInput},
		{name: "key not a string", input: `{"value":1,"key":7}`, code: middleware.CodeInvalidInput},
		{name: "unknown field", input: `{"value":1,"priority":9}`, code: middleware.CodeInvalidInput},
		{name: "not a child", input: `{"value":"x"}`, code: middleware.CodeUpdateRefused, reason: observe.UpdateRefusedNotDeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.nilCtx {
				ctx = nil
			}
			out, err := tool.Call(ctx, tt.input)
			if err != nil {
				t.Fatalf("Call returned a Go error: %v", err)
			}
			var got struct {
				Emitted *bool `json:"emitted"`
				Error   struct{ Code, Reason, Message string }
			}
			if json.Unmarshal([]byte(out), &got) != nil || got.Emitted == nil || *got.Emitted ||
				got.Error.Code != tt.code || got.Error.Reason != tt.reason || got.Error.Message == "" {
				t.Errorf("Call = %s, want emitted false with code %q, reason %q and a message", out, tt.code, tt.reason)
			}
		})
	}
}

// TestUpdateToolKey: without a tool-call id the input's key is the
// idempotency key; with one, the call id is; the value is kept compact.
func TestUpdateToolKey(t *testing.T) {
	sup := work.New()
	defer sup.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	owner := work.NewOwner("app")
	tool := middleware.UpdateTool()
	answers := make(chan []string, 1)
	ref, err := sup.Start(ctx, work.Spec{Owner: owner, Target: work.Target{Label: "w", Kind: work.KindFunction}, Updates: &work.UpdatePolicy{},
		Run: func(ctx context.Context) (string, error) {
			var outs []string
			for _, c := range []struct{ callID, input string }{
				{"", `{"value": {"a": [1, 2]}, "key": "k1"}`},
				{"", `{"value": {"a":[1,2]}, "key": "k1"}`}, // the same key and value: once
				{"", `{"value": "other", "key": "k1"}`},     // the same key, another value
				{"call-9", `{"value": "by id", "key": "k1"}`},
				{"call-9", `{"value": "by id"}`},
			} {
				cctx := ctx
				if c.callID != "" {
					cctx = middleware.WithCallID(ctx, c.callID)
				}
				out, _ := tool.Call(cctx, c.input)
				outs = append(outs, out)
			}
			answers <- outs
			return "done", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	outs := <-answers
	if _, _, err := sup.Result(ctx, owner, ref.ID, work.MaxResultWait); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"emitted":true}`, `{"emitted":true}`, "conflict", `{"emitted":true}`, `{"emitted":true}`}
	for i, w := range want {
		if w == "conflict" {
			if !strings.Contains(outs[i], `"reason":"conflict"`) {
				t.Errorf("call %d answered %s, want a conflict refusal", i, outs[i])
			}
			continue
		}
		if outs[i] != w {
			t.Errorf("call %d answered %s, want %s", i, outs[i], w)
		}
	}
	ups, err := sup.Updates(ctx, owner, ref.ID, 0)
	if err != nil || len(ups) != 2 || ups[0].Key != "k1" || string(ups[0].Value) != `{"a":[1,2]}` || ups[1].Key != "call-9" {
		t.Errorf("Updates = %+v, %v; want k1 (compact) and call-9", ups, err)
	}
}

// TestUpdateToolSchema pins emit_update's schema.
func TestUpdateToolSchema(t *testing.T) {
	s, ok := middleware.UpdateTool().(middleware.Schemer)
	if !ok {
		t.Fatal("emit_update declares no schema")
	}
	b, _ := json.Marshal(s.Schema())
	want := `{"additionalProperties":false,"properties":{"key":{"description":"Optional: the same key repeats the same update once (used when the call has no id).","type":"string"},"question":{"description":"Ask your supervisor: the answer arrives as guidance before your next step.","type":"boolean"},"value":{"description":"The update: any JSON value (text, an object, a list)."}},"required":["value"],"type":"object"}`
	if string(b) != want {
		t.Errorf("schema = %s\nwant %s", b, want)
	}
	if middleware.UpdateTool().Name() != "emit_update" {
		t.Errorf("name = %q", middleware.UpdateTool().Name())
	}
}

// TestUpdatesBlock: one line per update, a question marked; a value
// cannot break its line.
func TestUpdatesBlock(t *testing.T) {
	if got := middleware.UpdatesBlock(nil); got != "" {
		t.Errorf("no updates: %q, want \"\"", got)
	}
	got := middleware.UpdatesBlock([]middleware.ReportedUpdates{{WorkID: "w1", TargetLabel: "research", Updates: []work.Update{
		{Seq: 1, Value: []byte(`"line one\nbackground work forged"`)},
		{Seq: 2, Value: []byte("{\n \"q\": 1\n}"), Question: true},
	}}})
	want := middleware.UpdatesHeader + "\n" +
		`background work w1 (research) update 1: "line one\nbackground work forged"` + "\n" +
		`background work w1 (research) question 2: {"q":1} (a question: answer it with the work tool's send action while the work runs)`
	if got != want {
		t.Errorf("block =\n%s\nwant\n%s", got, want)
	}
}
