package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// childInput is a parsed child tool call.
type childInput struct {
	input      string // what the child's Run gets
	background bool
}

var errNotObject = errors.New("input must be a JSON object")

// parseObject decodes s as one JSON object, unwrapping langchaingo's
// {"__arg1": "<json>"} form. It reports ok=false (no error) when s is not a
// JSON object at all, so callers can treat it as plain text.
func parseObject(s string) (obj map[string]json.RawMessage, ok bool, err error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return nil, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false, nil
	}
	if dec.More() {
		return nil, false, nil
	}
	if raw, has := obj["__arg1"]; has && len(obj) == 1 {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, true, errors.New("__arg1 must be a string")
		}
		o2, ok2, err2 := parseObject(inner)
		if !ok2 && err2 == nil {
			return map[string]json.RawMessage{"__text": mustRaw(inner)}, true, nil
		}
		return o2, ok2, err2
	}
	return obj, true, nil
}

func mustRaw(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// parseChildInput turns a child tool's raw input into the child's input
// and the background flag. Accepted forms: a JSON object, a JSON object in
// langchaingo's __arg1 string, or (for a child that takes one string) plain
// text, which is always foreground.
func parseChildInput(c *Child, raw string) (childInput, error) {
	obj, isObj, err := parseObject(raw)
	if err != nil {
		return childInput{}, err
	}
	if text, ok := obj["__text"]; ok && len(obj) == 1 {
		var s string
		_ = json.Unmarshal(text, &s)
		raw, isObj = s, false
	}
	if !isObj {
		if c.Schema != nil {
			return childInput{}, errNotObject
		}
		return childInput{input: raw}, nil
	}
	var in childInput
	if rb, has := obj[ReservedField]; has {
		if err := json.Unmarshal(rb, &in.background); err != nil || bytes.Equal(bytes.TrimSpace(rb), []byte("null")) {
			return childInput{}, errors.New(`"run_in_background" must be a boolean`)
		}
		delete(obj, ReservedField)
	}
	if c.Schema == nil {
		if err := validateObject(stringSchemaStrict, obj); err != nil {
			return childInput{}, err
		}
		_ = json.Unmarshal(obj["input"], &in.input)
		return in, nil
	}
	if err := validateObject(c.Schema, obj); err != nil {
		return childInput{}, err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return childInput{}, errNotObject
	}
	in.input = string(b)
	return in, nil
}

var stringSchemaStrict = func() map[string]any {
	s := stringSchema()
	s["additionalProperties"] = false
	return s
}()
