package dashboards

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestCommittedDashboardIsUpToDate(t *testing.T) {
	want, err := OverviewJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(OverviewFile)
	if err != nil {
		t.Fatalf("read %s: %v; run `make dashboards` to generate it", OverviewFile, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: it differs from the generator's output (%s); run `make dashboards` and commit the result",
			OverviewFile, firstDiff(got, want))
	}
}

// TestOverviewIsDeterministic guards the staleness check: two builds must be
// byte-identical, or the committed file could never be current.
func TestOverviewIsDeterministic(t *testing.T) {
	a, err := OverviewJSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := OverviewJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two builds differ: %s", firstDiff(a, b))
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d: committed %q, generated %q", i+1, gl, wl)
		}
	}
	return "no line differs"
}

func TestGridLayout(t *testing.T) {
	d := committedDashboard(t)
	if d.UID != OverviewUID {
		t.Errorf("uid = %q, want %q", d.UID, OverviewUID)
	}
	panels := allPanels(d)
	if len(panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]string{}
	type placed struct {
		title string
		g     jsonGridPos
	}
	var seen []placed
	for _, p := range panels {
		name := fmt.Sprintf("%s %q", p.Type, p.Title)
		if p.ID <= 0 {
			t.Errorf("%s: id %d, want a positive id", name, p.ID)
		} else if other, dup := ids[p.ID]; dup {
			t.Errorf("%s: id %d also used by %s", name, p.ID, other)
		}
		ids[p.ID] = name
		if p.GridPos == nil {
			t.Errorf("%s: no gridPos (every panel needs an explicit position)", name)
			continue
		}
		g := *p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 {
			t.Errorf("%s: bad gridPos %+v", name, g)
		}
		if g.X+g.W > 24 {
			t.Errorf("%s: x+w = %d, past the 24-column grid", name, g.X+g.W)
		}
		if p.Type == "row" && (g.X != 0 || g.W != 24 || g.H != 1) {
			t.Errorf("%s: a row must span the grid: %+v", name, g)
		}
		for _, o := range seen {
			if overlap(g, o.g) {
				t.Errorf("%s at %+v overlaps %q at %+v", name, g, o.title, o.g)
			}
		}
		seen = append(seen, placed{name, g})
	}
}

func overlap(a, b jsonGridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func TestOverlapHelper(t *testing.T) {
	tests := []struct {
		name string
		a, b jsonGridPos
		want bool
	}{
		{"side by side", jsonGridPos{0, 0, 12, 8}, jsonGridPos{12, 0, 12, 8}, false},
		{"stacked", jsonGridPos{0, 0, 24, 1}, jsonGridPos{0, 1, 8, 8}, false},
		{"same cell", jsonGridPos{0, 0, 8, 8}, jsonGridPos{0, 0, 8, 8}, true},
		{"corner", jsonGridPos{0, 0, 8, 8}, jsonGridPos{7, 7, 8, 8}, true},
		{"inside", jsonGridPos{0, 0, 24, 10}, jsonGridPos{4, 2, 2, 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := overlap(tt.a, tt.b); got != tt.want {
				t.Errorf("overlap(%+v, %+v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := overlap(tt.b, tt.a); got != tt.want {
				t.Errorf("overlap is not symmetric for %+v, %+v", tt.a, tt.b)
			}
		})
	}
}

var metricInExpr = regexp.MustCompile(`agentwork_[a-z_]+`)

func TestPanelsHaveUnitDescriptionAndDatasource(t *testing.T) {
	for _, p := range allPanels(committedDashboard(t)) {
		if p.Type == "row" {
			continue
		}
		name := fmt.Sprintf("panel %q", p.Title)
		if p.Title == "" {
			t.Errorf("a %s panel has no title", p.Type)
		}
		if p.FieldConfig.Defaults.Unit == "" {
			t.Errorf("%s: no unit", name)
		}
		// A description must say what the panel shows (which metric) and
		// what to do when it looks wrong; the metric name is the checkable
		// half, length a crude guard on the other.
		if len(p.Description) < 120 {
			t.Errorf("%s: description %q is too short to say what to do when it looks wrong", name, p.Description)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %+v, want the ${datasource} variable", name, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no queries", name)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("%s target %s: datasource %+v, want the ${datasource} variable", name, tg.RefID, tg.Datasource)
			}
			for _, m := range metricInExpr.FindAllString(tg.Expr, -1) {
				m = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				if !strings.Contains(p.Description, m) {
					t.Errorf("%s: description does not name the metric %s it shows", name, m)
				}
			}
		}
	}
}

var rangeSel = regexp.MustCompile(`\[([^\]]*)\]`)

func TestPanelRatesUseRateInterval(t *testing.T) {
	for _, q := range panelQueries(t) {
		for _, m := range rangeSel.FindAllStringSubmatch(q.expr, -1) {
			// $__range only for totals over the dashboard's time range.
			if m[1] != "$__rate_interval" && (m[1] != "$__range" || !strings.Contains(q.expr, "increase(")) {
				t.Errorf("%s: range [%s], want [$__rate_interval] (or [$__range] in an increase): %s", q.where, m[1], q.expr)
			}
		}
	}
}

func TestVariables(t *testing.T) {
	d := committedDashboard(t)
	vars := map[string]jsonVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	ds, ok := vars["datasource"]
	if !ok || ds.Type != "datasource" || ds.Query != "prometheus" {
		t.Errorf("datasource variable = %+v, want a Prometheus data-source variable", ds)
	}
	tg, ok := vars["target"]
	if !ok {
		t.Fatal("no target variable")
	}
	if tg.Type != "query" || tg.Query != "label_values(agentwork_work_items, target)" {
		t.Errorf("target variable query = %v (%s), want label_values(agentwork_work_items, target)", tg.Query, tg.Type)
	}
	if !tg.Multi || !tg.IncludeAll || tg.AllValue != ".*" {
		t.Errorf("target variable multi=%v includeAll=%v allValue=%q, want multi, include all, all = .*", tg.Multi, tg.IncludeAll, tg.AllValue)
	}
	if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
		t.Errorf("target variable datasource = %+v, want ${datasource}", tg.Datasource)
	}
	for name, q := range map[string]string{
		"job":      "label_values(agentwork_work_concurrency_limit, job)",
		"instance": `label_values(agentwork_work_concurrency_limit{job=~"$job"}, instance)`,
	} {
		v, ok := vars[name]
		if !ok || v.Type != "query" || v.Query != q || !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
			t.Errorf("%s variable = %+v, want query %s, multi, include all = .*", name, v, q)
		}
	}
}

// TestPanelsFollowJobAndInstance: every panel query selects the job and
// instance variables on every metric it reads.
func TestPanelsFollowJobAndInstance(t *testing.T) {
	for _, q := range panelQueries(t) {
		n := strings.Count(q.expr, "agentwork_")
		if strings.Count(q.expr, `job=~"$job", instance=~"$instance"`) != n {
			t.Errorf("%s: not every metric selects $job and $instance: %s", q.where, q.expr)
		}
	}
}
