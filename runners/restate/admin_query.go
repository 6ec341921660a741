package restate

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// query runs one SQL statement on Restate's admin introspection endpoint
// (POST <admin>/query, answered as JSON) and decodes its rows into out (a
// pointer to a slice of structs whose json tags name the columns; a NULL
// column is absent from its row). The error never holds the server's
// message (it may echo the rows): a status and code only (errStatus).
func (c *ingress) query(ctx context.Context, sql string, out any) error {
	body, err := json.Marshal(map[string]string{"query": sql})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/query", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var rows struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := decodeReply(resp.StatusCode, resp.Body, maxReplyBytes, &rows); err != nil || len(rows.Rows) == 0 {
		return err
	}
	return json.Unmarshal(rows.Rows, out)
}

// sqlString is s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
