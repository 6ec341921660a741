package middleware

import (
	"encoding/json"
	"errors"
	"math"
	"sort"
)

// ReservedField is the optional boolean every backgroundable child's input
// gains.
const ReservedField = "run_in_background"

// cloneSchema deep-copies m through its JSON encoding, which also
// normalizes it (nested maps become map[string]any, lists []any), so the
// copy shares nothing with m. A schema that is not JSON-encodable is an
// error.
func cloneSchema(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// copySchema deep-copies a schema that is already normalized (cloneSchema
// succeeded on it once), so it cannot fail.
func copySchema(m map[string]any) map[string]any {
	out, err := cloneSchema(m)
	if err != nil {
		panic("middleware: copying a normalized schema: " + err.Error())
	}
	return out
}

// stringSchema is the input object of a child that takes one string.
func stringSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"input": map[string]any{"type": "string", "description": "The task for the child."},
		},
		"required": []any{"input"},
	}
}

func backgroundProperty() map[string]any {
	return map[string]any{
		"type":        "boolean",
		"description": "Run in the background: returns a work.ref at once; use the work tool to follow it and read its result.",
	}
}

// backgroundDefaultProperty is run_in_background of a child that runs in
// the background by default (Child.BackgroundByDefault).
func backgroundDefaultProperty() map[string]any {
	return map[string]any{
		"type":        "boolean",
		"default":     true,
		"description": "Run in the background (default true for this tool): returns a work.ref at once; use the work tool to follow it and read its result. Set false to wait for the exact output.",
	}
}

// withReserved returns a copy of schema (an object schema) with
// run_in_background added: true by default when byDefault is set.
func withReserved(schema map[string]any, byDefault bool) map[string]any {
	out := copySchema(schema)
	props, _ := out["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[ReservedField] = backgroundProperty()
	if byDefault {
		props[ReservedField] = backgroundDefaultProperty()
	}
	out["properties"] = props
	return out
}

// checkChildSchema refuses a normalized schema that is not an object schema
// (its type, when present, must be "object"; properties, when present, an
// object; required, when present, a list of strings) or that declares
// run_in_background.
func checkChildSchema(label string, schema map[string]any) error {
	if schema == nil {
		return nil
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return prepErr(ErrInvalidSchema, "middleware: child %q: input schema must be an object schema", label)
	}
	if p, ok := schema["properties"]; ok {
		props, isMap := p.(map[string]any)
		if !isMap {
			return prepErr(ErrInvalidSchema, "middleware: child %q: input schema properties must be an object", label)
		}
		if _, ok := props[ReservedField]; ok {
			return prepErr(ErrInvalidSchema, "middleware: child %q: input schema declares the reserved field %q", label, ReservedField)
		}
	}
	if r, ok := schema["required"]; ok {
		req, isList := r.([]any)
		if !isList {
			return prepErr(ErrInvalidSchema, "middleware: child %q: input schema required must be a list of names", label)
		}
		for _, name := range req {
			if _, isString := name.(string); !isString {
				return prepErr(ErrInvalidSchema, "middleware: child %q: input schema required must be a list of names", label)
			}
		}
	}
	return nil
}

// validateObject checks obj against the schema's required properties and
// the JSON types of its top-level properties. Messages name fields only,
// quoting at most MaxQuoted bytes of a name.
func validateObject(schema map[string]any, obj map[string]json.RawMessage) error {
	props, _ := schema["properties"].(map[string]any)
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				return errors.New("missing required field " + quote(name))
			}
		}
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := props[name].(map[string]any)
		if !ok {
			if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
				return errors.New("unknown field " + quote(name))
			}
			continue
		}
		want, _ := p["type"].(string)
		if want != "" && !jsonHasType(obj[name], want) {
			return errors.New("field " + quote(name) + " must be of type " + want)
		}
	}
	return nil
}

func jsonHasType(raw json.RawMessage, want string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch want {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64) // any size: a number with no fractional part
		return ok && f == math.Trunc(f)
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}
