package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// childInput is a parsed child tool call.
type childInput struct {
	input      string // what the child's Run gets
	background bool
	explicit   bool // the input has run_in_background (else the child's default applies)
}

var errNotObject = errors.New("input must be a JSON object")

// objectError is input that starts with '{' but is not exactly one JSON
// object (cut off, a trailing comma, an unquoted key, True, two objects,
// nesting deeper than encoding/json allows, trailing text).
type objectError struct{ reason string }

func (e *objectError) Error() string { return e.reason }

// badObject describes why t, which starts with '{', is not one JSON object.
// The reason is short and stable for the same input: a byte offset and
// encoding/json's description (which names at most one character of t),
// cut to 2*MaxQuoted bytes in case a JSON implementation says more.
func badObject(err error) *objectError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &objectError{fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, clip(se.Error(), 2*MaxQuoted))}
	}
	return &objectError{"invalid JSON"}
}

// parseObject decodes s as exactly one JSON object, unwrapping langchaingo's
// {"__arg1": "<string>"} form (repeatedly). When s, or the string inside
// __arg1, does not start with '{' (after leading space) it reports
// isObj=false with that text, so callers can treat it as plain text. Text
// that starts with '{' but is not exactly one JSON object is an
// *objectError: it is never taken for plain text, so a malformed
// background launch is refused instead of running in the foreground. An
// __arg1 that is not a string is an error.
func parseObject(s string) (obj map[string]json.RawMessage, text string, isObj bool, err error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") {
		return nil, s, false, nil
	}
	if err := json.Unmarshal([]byte(t), &obj); err != nil {
		return nil, "", false, badObject(err)
	}
	if raw, has := obj["__arg1"]; has && len(obj) == 1 {
		var inner string
		if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &inner) != nil {
			return nil, "", false, errors.New("__arg1 must be a string")
		}
		return parseObject(inner)
	}
	return obj, "", true, nil
}

// encodeObject encodes obj compactly, with sorted keys and without HTML
// escaping, so string values reach the child as the caller wrote them.
func encodeObject(obj map[string]json.RawMessage) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// parseChildInput turns a child tool's raw input into the child's input
// and the background flag. Accepted forms: a JSON object, a JSON object in
// langchaingo's __arg1 string, or (for a child that takes one string) plain
// text, raw or in __arg1, which has no run_in_background (the child's
// default applies: foreground unless Child.BackgroundByDefault) and reaches
// the child unchanged. Plain text never starts with '{' (after leading space): such
// input must be exactly one JSON object or it is refused.
func parseChildInput(c *Child, raw string) (childInput, error) {
	obj, text, isObj, err := parseObject(raw)
	var oe *objectError
	if errors.As(err, &oe) {
		if c.Schema != nil {
			return childInput{}, fmt.Errorf(`input that starts with "{" must be exactly one JSON object (%s); send one JSON object with the child's fields`, oe.reason)
		}
		return childInput{}, fmt.Errorf(`input that starts with "{" must be exactly one JSON object (%s); send a JSON object, and wrap plain text that starts with "{" as {"input": "..."}`, oe.reason)
	}
	if err != nil {
		return childInput{}, err
	}
	if !isObj {
		if c.Schema != nil {
			return childInput{}, errNotObject
		}
		return childInput{input: text}, nil
	}
	var in childInput
	if rb, has := obj[ReservedField]; has {
		if bytes.Equal(rb, []byte("null")) || json.Unmarshal(rb, &in.background) != nil {
			return childInput{}, errors.New(`"run_in_background" must be a boolean`)
		}
		in.explicit = true
		delete(obj, ReservedField)
	}
	if c.Schema == nil {
		if err := validateObject(stringSchemaStrict, obj); err != nil {
			return childInput{}, err
		}
		_ = json.Unmarshal(obj["input"], &in.input) // a string: validated above
		return in, nil
	}
	if err := validateObject(c.Schema, obj); err != nil {
		return childInput{}, err
	}
	if in.input, err = encodeObject(obj); err != nil {
		return childInput{}, errNotObject
	}
	return in, nil
}

var stringSchemaStrict = func() map[string]any {
	s := stringSchema()
	s["additionalProperties"] = false
	return s
}()
