package restate

import (
	"context"
	"encoding/json"
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
	var rows struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := c.once(ctx, "query", "", body, &rows); err != nil || len(rows.Rows) == 0 {
		return err
	}
	return json.Unmarshal(rows.Rows, out)
}

// sqlString is s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
