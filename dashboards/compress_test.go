package dashboards

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// compressRules returns the rule file src with time compressed factor-fold
// for a test: every duration of it (each rule's `for` and `keep_firing_for`,
// each group's `interval`, and every range of a range selector or subquery
// and every offset of a selector in an expression) divided by factor, and
// nothing else changed. Each rewritten expression is checked to differ from
// the shipped one only in its ranges and offsets, so a test that loads the
// result tests the shipped expressions. It refuses what it cannot compress
// faithfully (duration expressions, @ modifiers, offsets of subqueries).
func compressRules(src []byte, factor int) ([]byte, error) {
	if factor < 1 {
		return nil, fmt.Errorf("factor %d", factor)
	}
	var f map[string]any
	if err := yaml.Unmarshal(src, &f); err != nil {
		return nil, err
	}
	groups, _ := f["groups"].([]any)
	if len(groups) == 0 {
		return nil, fmt.Errorf("no groups")
	}
	scaleField := func(m map[string]any, key, where string) error {
		v, ok := m[key]
		if !ok {
			return nil
		}
		d, err := model.ParseDuration(fmt.Sprint(v))
		if err != nil {
			return fmt.Errorf("%s: %s %v: %w", where, key, v, err)
		}
		m[key] = model.Duration(scaleDuration(time.Duration(d), factor)).String()
		return nil
	}
	for _, g := range groups {
		gm, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("group %v is not a map", g)
		}
		if err := scaleField(gm, "interval", fmt.Sprint("group ", gm["name"])); err != nil {
			return nil, err
		}
		rules, _ := gm["rules"].([]any)
		for _, r := range rules {
			rm, ok := r.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("rule %v is not a map", r)
			}
			where := fmt.Sprint("rule ", rm["alert"], rm["record"])
			for _, k := range []string{"for", "keep_firing_for"} {
				if err := scaleField(rm, k, where); err != nil {
					return nil, err
				}
			}
			expr, err := compressExpr(fmt.Sprint(rm["expr"]), factor)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			rm["expr"] = expr
		}
	}
	return yaml.Marshal(f)
}

// scaleDuration divides d by factor, keeping at least a second.
func scaleDuration(d time.Duration, factor int) time.Duration {
	return max(d/time.Duration(factor), time.Second)
}

// compressExpr divides every range in expr by factor and checks that the
// result differs from expr only there.
func compressExpr(expr string, factor int) (string, error) {
	p := parser.NewParser(parser.Options{})
	orig, err := p.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	ranges, err := exprRanges(orig)
	if err != nil {
		return "", err
	}
	for _, r := range ranges {
		*r = scaleDuration(*r, factor)
	}
	out := orig.String()

	// The check: parse the result, put the shipped ranges back, and it
	// must print as the shipped expression does.
	shipped, err := p.ParseExpr(expr)
	if err != nil {
		return "", err
	}
	want, _ := exprRanges(shipped)
	back, err := p.ParseExpr(out)
	if err != nil {
		return "", fmt.Errorf("the compressed expression does not parse: %w\n%s", err, out)
	}
	got, err := exprRanges(back)
	if err != nil || len(got) != len(want) {
		return "", fmt.Errorf("the compressed expression has %d ranges (%v), the shipped one %d", len(got), err, len(want))
	}
	for i := range got {
		if *got[i] != scaleDuration(*want[i], factor) {
			return "", fmt.Errorf("range %d: %s, want %s", i, *got[i], scaleDuration(*want[i], factor))
		}
		*got[i] = *want[i]
	}
	if back.String() != shipped.String() {
		return "", fmt.Errorf("the compressed expression differs from the shipped one beyond its ranges:\n%s\n%s", back, shipped)
	}
	return out, nil
}

// exprRanges returns pointers to every range (range selectors, subquery
// ranges and steps) and every selector's offset of e, in walk order, and
// refuses what the compression cannot handle.
func exprRanges(e parser.Expr) ([]*time.Duration, error) {
	var out []*time.Duration
	var err error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if err != nil {
			return err
		}
		switch n := n.(type) {
		case *parser.MatrixSelector:
			if n.RangeExpr != nil {
				err = fmt.Errorf("duration expression in %s", n)
				return err
			}
			out = append(out, &n.Range)
		case *parser.SubqueryExpr:
			if n.RangeExpr != nil || n.StepExpr != nil || n.OriginalOffset != 0 || n.OriginalOffsetExpr != nil || n.Timestamp != nil || n.StartOrEnd != 0 {
				err = fmt.Errorf("offset, @ or duration expression in %s", n)
				return err
			}
			out = append(out, &n.Range)
			if n.Step != 0 {
				out = append(out, &n.Step)
			}
		case *parser.VectorSelector:
			if n.OriginalOffset < 0 || n.OriginalOffsetExpr != nil || n.Timestamp != nil || n.StartOrEnd != 0 {
				err = fmt.Errorf("negative offset, offset expression or @ in %s", n)
				return err
			}
			if n.OriginalOffset != 0 {
				out = append(out, &n.OriginalOffset)
			}
		}
		return nil
	})
	return out, err
}

// compressFactor is how many times faster than real time the integration
// test runs the alerts: the rule durations are divided by it and the
// drivers' clocks run this much faster.
const compressFactor = 60

func TestCompressRules(t *testing.T) {
	src, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	out, err := compressRules(src, compressFactor)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	shipped := map[string]alertRule{}
	for _, r := range loadRules(t) {
		shipped[r.Alert] = r
	}
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			n++
			s, ok := shipped[r.Alert]
			if !ok {
				t.Errorf("compressed rule %s is not shipped", r.Alert)
				continue
			}
			sf, _ := model.ParseDuration(s.For)
			if cf, err := model.ParseDuration(r.For); err != nil || time.Duration(cf) != scaleDuration(time.Duration(sf), compressFactor) {
				t.Errorf("%s: for %s, shipped %s", r.Alert, r.For, s.For)
			}
			if fmt.Sprint(r.Labels) != fmt.Sprint(s.Labels) || fmt.Sprint(r.Annotations) != fmt.Sprint(s.Annotations) {
				t.Errorf("%s: labels or annotations changed", r.Alert)
			}
			if strings.Contains(s.Expr, "[10m]") && !strings.Contains(r.Expr, "[10s]") {
				t.Errorf("%s: the 10m windows were not compressed to 10s: %s", r.Alert, r.Expr)
			}
			t.Logf("%s (for %s): %s", r.Alert, r.For, r.Expr)
		}
	}
	if n != len(shipped) {
		t.Errorf("%d compressed rules, %d shipped", n, len(shipped))
	}
}

func TestCompressExprRefuses(t *testing.T) {
	for _, e := range []string{`x offset -5m`, `max_over_time(x[5m:1m] @ 100)`, `max_over_time(x[5m:1m] offset 1m)`, `x @ start()`} {
		if out, err := compressExpr(e, 60); err == nil {
			t.Errorf("compressExpr(%q) = %q, want an error", e, out)
		}
	}
	for e, want := range map[string]string{
		`max_over_time(rate(x[10m])[30m:1m]) > 300`: `max_over_time(rate(x[10s])[30s:1s]) > 300`,
		`rate(x[5m] offset 1m)`:                     `rate(x[5s] offset 1s)`,
		`x unless max_over_time(x[1h] offset 15m)`:  `x unless max_over_time(x[1m] offset 15s)`,
	} {
		if out, err := compressExpr(e, 60); err != nil || out != want {
			t.Errorf("compressExpr(%q) = %q, %v, want %q", e, out, err, want)
		}
	}
}
