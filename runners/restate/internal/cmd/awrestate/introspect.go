package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// query runs one SQL query on Restate's admin introspection endpoint
// (POST <admin>/query) and returns its rows.
func query(ctx context.Context, admin, sql string) ([]map[string]any, error) {
	body, _ := json.Marshal(map[string]string{"query": sql})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, admin+"/query", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("query %q: %s: %s", sql, resp.Status, b)
	}
	var out struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("query %q: %w", sql, err)
	}
	return out.Rows, nil
}

// storedTables are the tables of Restate's introspection schema.
func storedTables(ctx context.Context, admin string) ([]string, error) {
	rows, err := query(ctx, admin, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rows {
		if n, ok := r["table_name"].(string); ok {
			names = append(names, n)
		}
	}
	return names, nil
}

// dumpTable is every row of table as text: the JSON, and beside it every
// string decoded from base64 and hex and every array of byte values as
// bytes, so that content in a binary column (a journal entry, a state
// value) is found either way.
func dumpTable(ctx context.Context, admin, table string) ([]byte, int, error) {
	rows, err := query(ctx, admin, "SELECT * FROM "+table)
	if err != nil {
		return nil, 0, err
	}
	var out bytes.Buffer
	for _, r := range rows {
		js, _ := json.Marshal(r)
		out.Write(js)
		out.WriteByte('\n')
		decodeAll(&out, r)
	}
	return out.Bytes(), len(rows), nil
}

func decodeAll(out *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, y := range x {
			decodeAll(out, y)
		}
	case []any:
		var raw []byte
		for _, y := range x {
			if f, ok := y.(float64); ok && f >= 0 && f < 256 && f == float64(byte(f)) {
				raw = append(raw, byte(f))
			} else {
				raw = nil
				break
			}
		}
		out.Write(raw)
		for _, y := range x {
			decodeAll(out, y)
		}
	case string:
		if b, err := base64.StdEncoding.DecodeString(x); err == nil {
			out.Write(b)
			out.WriteByte('\n')
		}
		if b, err := hex.DecodeString(x); err == nil {
			out.Write(b)
			out.WriteByte('\n')
		}
		// A string may itself be JSON (entry_json).
		var inner any
		if json.Unmarshal([]byte(x), &inner) == nil {
			if _, isStr := inner.(string); !isStr {
				decodeAll(out, inner)
			}
		}
	}
}

// retainedOutputs is the outputs Restate keeps for the completed
// invocations that had an idempotency key (read back through the
// ingress's attach API, GET <ingress>/restate/invocation/<id>/output),
// which the introspection tables do not show.
// It returns them by invocation target.
func retainedOutputs(ctx context.Context, admin, ingress string) (map[string][]byte, int, error) {
	rows, err := query(ctx, admin, "SELECT id, target FROM sys_invocation WHERE idempotency_key IS NOT NULL AND status = 'completed'")
	if err != nil {
		return nil, 0, err
	}
	out := map[string][]byte{}
	for _, r := range rows {
		id, _ := r["id"].(string)
		target, _ := r["target"].(string)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ingress+"/restate/invocation/"+id+"/output", nil)
		if err != nil {
			return nil, 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode/100 != 2 {
			return nil, 0, fmt.Errorf("output of %s: %s: %s", id, resp.Status, b)
		}
		out[target] = append(append(out[target], b...), '\n')
	}
	return out, len(rows), nil
}
