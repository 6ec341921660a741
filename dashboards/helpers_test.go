package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Files under test, relative to this module's root (the test's working
// directory).
const (
	rulesFile = "alerts/agentwork.rules.yml"
	// defaultGolden is the telemetry package's exposition golden: the
	// metrics the library really exports, written by its scenario test.
	defaultGolden = "../telemetry/promexport/testdata/scenario.golden"
	// goldenEnv overrides defaultGolden (for working on dashboards while the
	// telemetry golden is elsewhere). Unset in CI.
	goldenEnv = "AGENTWORK_METRICS_GOLDEN"
)

// jsonPanel is the part of a Grafana panel the tests look at.
type jsonPanel struct {
	ID          int          `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	GridPos     *jsonGridPos `json:"gridPos"`
	Datasource  *jsonDSRef   `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID      string     `json:"refId"`
		Expr       string     `json:"expr"`
		Datasource *jsonDSRef `json:"datasource"`
	} `json:"targets"`
	Panels []jsonPanel `json:"panels"` // a collapsed row's panels
}

type jsonGridPos struct {
	X, Y, W, H int
}

type jsonDSRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type jsonVariable struct {
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	Query      any        `json:"query"`
	Datasource *jsonDSRef `json:"datasource"`
	Multi      bool       `json:"multi"`
	IncludeAll bool       `json:"includeAll"`
	AllValue   string     `json:"allValue"`
}

type jsonDashboard struct {
	UID        string      `json:"uid"`
	Title      string      `json:"title"`
	Panels     []jsonPanel `json:"panels"`
	Templating struct {
		List []jsonVariable `json:"list"`
	} `json:"templating"`
}

// committedDashboard reads the committed overview JSON: the tests check what
// users actually import, not the Go values.
func committedDashboard(t *testing.T) jsonDashboard {
	t.Helper()
	b, err := os.ReadFile(OverviewFile)
	if err != nil {
		t.Fatalf("read %s: %v (run `make dashboards`)", OverviewFile, err)
	}
	var d jsonDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("parse %s: %v", OverviewFile, err)
	}
	return d
}

// allPanels flattens rows: top-level panels followed by any collapsed row's
// children.
func allPanels(d jsonDashboard) []jsonPanel {
	var out []jsonPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleFile struct {
	Groups []struct {
		Name  string      `yaml:"name"`
		Rules []alertRule `yaml:"rules"`
	} `yaml:"groups"`
}

func loadRules(t *testing.T) []alertRule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatalf("read %s: %v", rulesFile, err)
	}
	var f ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("parse %s: %v", rulesFile, err)
	}
	var out []alertRule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return out
}

// promQuery is one PromQL expression and where it came from, for messages.
type promQuery struct {
	where string
	expr  string
}

// panelQueries returns every panel target expression of the committed
// dashboard, raw (Grafana variables not yet substituted).
func panelQueries(t *testing.T) []promQuery {
	t.Helper()
	var out []promQuery
	for _, p := range allPanels(committedDashboard(t)) {
		for _, tg := range p.Targets {
			out = append(out, promQuery{where: fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), expr: tg.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatal("the dashboard has no panel queries")
	}
	return out
}

func alertQueries(t *testing.T) []promQuery {
	t.Helper()
	var out []promQuery
	for _, r := range loadRules(t) {
		name := r.Alert
		if name == "" {
			name = r.Record
		}
		out = append(out, promQuery{where: "rule " + name, expr: r.Expr})
	}
	return out
}

// grafanaVars maps the Grafana variables our queries may use to values that
// make a valid PromQL expression. Longest names first, so that $__rate_interval
// is replaced before $__range or $__interval could match a prefix of it.
var grafanaVars = []struct{ name, value string }{
	{"${__rate_interval}", "5m"},
	{"$__rate_interval", "5m"},
	{"${__interval}", "1m"},
	{"$__interval", "1m"},
	{"${__range}", "1h"},
	{"$__range", "1h"},
	{"${instance}", ".*"},
	{"$instance", ".*"},
	{"${job}", ".*"},
	{"$job", ".*"},
	{"${target:regex}", ".*"},
	{"${target}", ".*"},
	{"$target", ".*"},
}

var leftoverVar = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?`)

// substitute replaces Grafana variables with concrete values and fails on
// any variable it does not know (it would otherwise reach Prometheus as text).
func substitute(expr string) (string, error) {
	for _, v := range grafanaVars {
		expr = strings.ReplaceAll(expr, v.name, v.value)
	}
	if m := leftoverVar.FindString(expr); m != "" {
		return "", fmt.Errorf("unknown Grafana variable %s (teach the test its value)", m)
	}
	return expr, nil
}

// exportedFamily is a metric family the library exports, from the golden.
type exportedFamily struct {
	name   string
	typ    dto.MetricType
	labels map[string]bool // label names seen on its samples
}

// exportedSeries maps every series name a scrape can contain (a histogram
// family foo yields foo_bucket, foo_sum and foo_count) to its family.
type exportedSeries map[string]*exportedFamily

func goldenPath() string {
	if p := os.Getenv(goldenEnv); p != "" {
		return p
	}
	return defaultGolden
}

// loadExported parses the telemetry golden. It fails, never skips, when the
// golden is missing: the metric check is the point of these tests.
func loadExported(t *testing.T) exportedSeries {
	t.Helper()
	path := goldenPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("telemetry golden missing: %s does not exist. It is written by the telemetry package's exposition scenario test "+
			"(telemetry/promexport); the metric names used by the dashboard and alerts are checked against it. "+
			"Set %s to another exposition file only while developing.", path, goldenEnv)
	}
	if err != nil {
		t.Fatalf("read telemetry golden %s: %v", path, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("parse telemetry golden %s (Prometheus text format): %v", path, err)
	}
	out := exportedSeries{}
	for name, mf := range fams {
		f := &exportedFamily{name: name, typ: mf.GetType(), labels: map[string]bool{}}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				f.labels[lp.GetName()] = true
			}
		}
		switch f.typ {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			out[name+"_bucket"] = f
			out[name+"_sum"] = f
			out[name+"_count"] = f
		case dto.MetricType_SUMMARY:
			out[name] = f
			out[name+"_sum"] = f
			out[name+"_count"] = f
		default:
			out[name] = f
		}
	}
	if len(out) == 0 {
		t.Fatalf("telemetry golden %s has no metrics", path)
	}
	return out
}

func (e exportedSeries) names() string {
	var s []string
	for n := range e {
		s = append(s, n)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
