package middleware

import (
	"encoding/json"
	"fmt"
	"sort"
)

// ReservedField is the optional boolean every backgroundable child's input
// gains.
const ReservedField = "run_in_background"

func cloneSchema(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
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

// withReserved returns a copy of schema (an object schema) with
// run_in_background added.
func withReserved(schema map[string]any) map[string]any {
	out := cloneSchema(schema)
	props, _ := out["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[ReservedField] = backgroundProperty()
	out["properties"] = props
	return out
}

// checkChildSchema refuses a schema that is not an object schema or that
// declares run_in_background.
func checkChildSchema(label string, schema map[string]any) error {
	if schema == nil {
		return nil
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return fmt.Errorf("middleware: child %q: input schema must be an object schema", label)
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		if _, ok := props[ReservedField]; ok {
			return fmt.Errorf("middleware: child %q: input schema declares the reserved field %q", label, ReservedField)
		}
	}
	return nil
}

// validateObject checks obj against the schema's required properties and
// the JSON types of its top-level properties. Messages name fields only.
func validateObject(schema map[string]any, obj map[string]json.RawMessage) error {
	props, _ := schema["properties"].(map[string]any)
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("missing required field %q", name)
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
				return fmt.Errorf("unknown field %q", name)
			}
			continue
		}
		want, _ := p["type"].(string)
		if want != "" && !jsonHasType(obj[name], want) {
			return fmt.Errorf("field %q must be of type %s", name, want)
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
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
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
