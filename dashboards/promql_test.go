package dashboards

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// selector is one metric selector found in a query.
type selector struct {
	name     string
	matchers []*labels.Matcher // without __name__
}

// grouping is the label list of one `by (...)` aggregation and the metrics
// aggregated under it.
type grouping struct {
	labels  []string
	metrics []string
}

// parseSelectors substitutes Grafana variables, parses expr with the
// Prometheus PromQL parser and returns every vector selector in it.
func parseSelectors(expr string) ([]selector, error) {
	sels, _, err := parseQuery(expr)
	return sels, err
}

// parseQuery is parseSelectors that also returns the `by` groupings.
func parseQuery(expr string) ([]selector, []grouping, error) {
	sub, err := substitute(expr)
	if err != nil {
		return nil, nil, err
	}
	p := parser.NewParser(parser.Options{})
	ast, err := p.ParseExpr(sub)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %q: %w", sub, err)
	}
	var out []selector
	var groups []grouping
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		if ag, ok := n.(*parser.AggregateExpr); ok && !ag.Without && len(ag.Grouping) > 0 {
			g := grouping{labels: ag.Grouping}
			parser.Inspect(ag.Expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok {
					g.metrics = append(g.metrics, vs.Name)
				}
				return nil
			})
			groups = append(groups, g)
		}
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := selector{name: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel {
				if s.name == "" && m.Type == labels.MatchEqual {
					s.name = m.Value
				}
				continue
			}
			s.matchers = append(s.matchers, m)
		}
		out = append(out, s)
		return nil
	})
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%q selects no metric", sub)
	}
	return out, groups, nil
}

// scrapeLabels are added by Prometheus when it scrapes, so the golden cannot
// show them.
var scrapeLabels = map[string]bool{"job": true, "instance": true}

// labelValuesQuery matches the target variable's Grafana query.
var labelValuesQuery = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// variableSelectors returns the metric and label each label_values variable
// query reads, as selectors.
func variableSelectors(t *testing.T) []promQuery {
	t.Helper()
	var out []promQuery
	for _, v := range committedDashboard(t).Templating.List {
		q, ok := v.Query.(string)
		if v.Type != "query" || !ok {
			continue
		}
		m := labelValuesQuery.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
			continue
		}
		// Express it as a selector that requires the label, so the
		// metric-and-label check below covers it.
		sel := strings.TrimSuffix(strings.TrimPrefix(m[2], "{"), "}")
		if sel != "" {
			sel += ", "
		}
		out = append(out, promQuery{where: "variable " + v.Name, expr: fmt.Sprintf(`%s{%s%s!=""}`, m[1], sel, m[3])})
	}
	return out
}

func allQueries(t *testing.T) []promQuery {
	t.Helper()
	qs := panelQueries(t)
	qs = append(qs, variableSelectors(t)...)
	qs = append(qs, alertQueries(t)...)
	for alert, rqs := range runbookQueries(t) {
		for i, q := range rqs {
			qs = append(qs, promQuery{where: fmt.Sprintf("runbook %s query %d", alert, i+1), expr: q})
		}
	}
	return qs
}

func TestSubstitute(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{`rate(x{target=~"$target"}[$__rate_interval])`, `rate(x{target=~".*"}[5m])`, ""},
		{`rate(x{target=~"${target}"}[${__rate_interval}])`, `rate(x{target=~".*"}[5m])`, ""},
		{`increase(x[$__range]) / $__interval`, `increase(x[1h]) / 1m`, ""},
		{`x{job=~"$job", instance=~"$instance"}`, `x{job=~".*", instance=~".*"}`, ""},
		{`x{pod="$pod"}`, "", "$pod"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := substitute(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("substitute(%q) error = %v, want one naming %s", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("substitute(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestQueriesParse parses every panel query, variable query and alert
// expression with the PromQL parser. It needs no golden.
func TestQueriesParse(t *testing.T) {
	for _, q := range allQueries(t) {
		sels, err := parseSelectors(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		for _, s := range sels {
			if !strings.HasPrefix(s.name, "agentwork_") && s.name != "target_info" {
				t.Errorf("%s: selector without an agentwork_ metric name (%q) in %s", q.where, s.name, q.expr)
			}
		}
	}
}

// TestQueriesUseExportedMetrics checks that every metric a panel, variable or
// alert names is one the library exports, with the labels it matches on,
// according to the telemetry golden (not a list retyped here).
func TestQueriesUseExportedMetrics(t *testing.T) {
	exported := loadExported(t)
	used := map[string]bool{}
	for _, q := range allQueries(t) {
		sels, groups, err := parseQuery(q.expr)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		for _, g := range groups {
			if len(g.metrics) > 0 && !slices.ContainsFunc(g.metrics, func(m string) bool { return m != "target_info" }) {
				continue // the OTel resource metric: its labels are the resource's, not in the golden
			}
			for _, l := range g.labels {
				if scrapeLabels[l] {
					continue
				}
				has := false
				for _, m := range g.metrics {
					f := exported[m]
					switch {
					case f == nil:
					case l == "le" && strings.HasSuffix(m, "_bucket") && f.typ == dto.MetricType_HISTOGRAM:
						has = true // bucket bounds are not labels in the parsed golden
					case f.labels[l] || len(f.labels) == 0:
						has = true
					}
				}
				if !has {
					t.Errorf("%s: groups by %q, which none of %v carries in the golden", q.where, l, g.metrics)
				}
			}
		}
		for _, s := range sels {
			if s.name == "target_info" {
				// The OTel exporter's resource metric (promexport.WithTargetInfo);
				// only the demo-environment exclusion reads it.
				continue
			}
			f, ok := exported[s.name]
			if !ok {
				t.Errorf("%s: metric %s is not exported by the library (golden %s has: %s)", q.where, s.name, goldenPath(), exported.names())
				continue
			}
			used[f.name] = true
			for _, m := range s.matchers {
				if scrapeLabels[m.Name] {
					continue
				}
				if len(f.labels) > 0 && !f.labels[m.Name] {
					t.Errorf("%s: %s has no label %q in the golden", q.where, s.name, m.Name)
				}
			}
		}
	}
	for _, f := range exported {
		if strings.HasPrefix(f.name, "agentwork_") && !used[f.name] {
			t.Logf("note: exported metric %s is on no panel or alert", f.name)
		}
	}
}

// runbookBase is where runbook_url annotations point: this module's
// directory on the repository's main branch.
const runbookBase = "https://github.com/agentwork/agentwork/blob/main/dashboards/"

var (
	templateBlock = regexp.MustCompile(`\{\{(.*?)\}\}`)
	labelRef      = regexp.MustCompile(`\$labels\.([A-Za-z_][A-Za-z0-9_]*)|index\s+\$labels\s+"([^"]*)"`)
	// allowedAnnotationLabels are the only label values an annotation may
	// carry: low-cardinality names, never an id.
	allowedAnnotationLabels = map[string]bool{"target": true}
	allowedSeverities       = map[string]bool{"critical": true, "warning": true, "info": true}
)

func TestAlertRules(t *testing.T) {
	want := map[string]bool{
		"AgentworkWorkFailureRatioHigh":     false,
		"AgentworkQueuedWorkWaiting":        false,
		"AgentworkWorkStuckCancelRequested": false,
		"AgentworkAtConcurrencyLimit":       false,
		"AgentworkWorkOrphaned":             false,
		"AgentworkApprovalPending":          false,
	}
	seen := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			t.Errorf("rule with expr %q is not an alert", r.Expr)
			continue
		}
		if seen[r.Alert] {
			t.Errorf("alert %s defined twice", r.Alert)
		}
		seen[r.Alert] = true
		if _, ok := want[r.Alert]; ok {
			want[r.Alert] = true
		}
		if d, err := time.ParseDuration(r.For); err != nil || d < time.Minute {
			t.Errorf("%s: for %q, want at least 1m so a blip does not fire", r.Alert, r.For)
		}
		if !allowedSeverities[r.Labels["severity"]] {
			t.Errorf("%s: severity label %q, want one of critical, warning, info", r.Alert, r.Labels["severity"])
		}
		// Every alert links its runbook, a page of this repository.
		if u := r.Annotations["runbook_url"]; !strings.HasPrefix(u, runbookBase) {
			t.Errorf("%s: runbook_url %q, want one under %s", r.Alert, u, runbookBase)
		} else if _, err := os.Stat(strings.TrimPrefix(u, runbookBase)); err != nil {
			t.Errorf("%s: runbook_url %q names no file in this module: %v", r.Alert, u, err)
		} else if u != runbookBase+"runbooks/"+r.Alert+".md" {
			t.Errorf("%s: runbook_url %q, want runbooks/%s.md", r.Alert, u, r.Alert)
		}
		for _, k := range []string{"summary", "description"} {
			if strings.TrimSpace(r.Annotations[k]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, k)
			}
		}
		for k, v := range r.Annotations {
			for _, blk := range templateBlock.FindAllStringSubmatch(v, -1) {
				if strings.Contains(blk[1], "$labels") && labelRef.FindStringSubmatch(blk[1]) == nil {
					t.Errorf("%s annotation %s: template {{%s}} reads labels in a way the test cannot check", r.Alert, k, blk[1])
				}
				for _, m := range labelRef.FindAllStringSubmatch(blk[1], -1) {
					l := m[1] + m[2]
					if !allowedAnnotationLabels[l] {
						t.Errorf("%s annotation %s: uses label %q; annotations may only carry %v (never anything that could be an id)", r.Alert, k, l, allowedAnnotationLabels)
					}
				}
			}
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("alert %s is missing", name)
		}
	}
}
