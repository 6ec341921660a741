package dashboards

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

// walkStrings calls f for every scalar string in a decoded YAML tree, with
// its key path.
func walkStrings(path string, v any, f func(path, s string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			walkStrings(path+"."+k, c, f)
		}
	case []any:
		for _, c := range v {
			walkStrings(path+"[]", c, f)
		}
	case string:
		f(path, v)
	}
}

func TestJaegerConfigBindsLoopbackOnly(t *testing.T) {
	var cfg map[string]any
	readYAML(t, "stack/jaeger.yaml", &cfg)

	// Every listener is spelled out on 127.0.0.1: a component left without
	// an endpoint would listen on its default, which may be 0.0.0.0.
	want := map[string]string{
		".receivers.otlp.protocols.grpc.endpoint": "127.0.0.1:4317",
		".receivers.otlp.protocols.http.endpoint": "127.0.0.1:4318",
		".extensions.jaeger_query.http.endpoint":  "127.0.0.1:16686",
		".extensions.jaeger_query.grpc.endpoint":  "127.0.0.1:16685",
	}
	got := map[string]string{}
	walkStrings("", cfg, func(path, s string) {
		if strings.HasSuffix(path, ".endpoint") || strings.HasSuffix(path, ".host") {
			got[path] = s
			if !strings.HasPrefix(s, "127.0.0.1:") && s != "127.0.0.1" {
				t.Errorf("%s = %q: every Jaeger listener must be on 127.0.0.1", path, s)
			}
		}
	})
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	svc, _ := cfg["service"].(map[string]any)
	exts, _ := svc["extensions"].([]any)
	if !slices.Equal(exts, []any{"jaeger_storage", "jaeger_query"}) {
		t.Errorf("service.extensions = %v, want exactly [jaeger_storage jaeger_query] (others open listeners)", exts)
	}
	recv, _ := cfg["receivers"].(map[string]any)
	if len(recv) != 1 || recv["otlp"] == nil {
		t.Errorf("receivers = %v, want only otlp", recv)
	}
	tel, _ := svc["telemetry"].(map[string]any)
	metrics, _ := tel["metrics"].(map[string]any)
	if metrics["level"] != "none" {
		t.Errorf("service.telemetry.metrics.level = %v, want none (the default opens a metrics listener on :8888)", metrics["level"])
	}

	// The query extension and the exporter use the one in-memory backend.
	ext, _ := cfg["extensions"].(map[string]any)
	storage, _ := ext["jaeger_storage"].(map[string]any)
	backends, _ := storage["backends"].(map[string]any)
	query, _ := ext["jaeger_query"].(map[string]any)
	qs, _ := query["storage"].(map[string]any)
	name, _ := qs["traces"].(string)
	be, _ := backends[name].(map[string]any)
	if be == nil || be["memory"] == nil {
		t.Errorf("jaeger_query.storage.traces = %q, want a memory backend of jaeger_storage (have %v)", name, backends)
	}
	exp, _ := cfg["exporters"].(map[string]any)
	se, _ := exp["jaeger_storage_exporter"].(map[string]any)
	if se["trace_storage"] != name {
		t.Errorf("jaeger_storage_exporter.trace_storage = %v, want %q", se["trace_storage"], name)
	}
}

func TestPrometheusConfig(t *testing.T) {
	var cfg struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName        string `yaml:"job_name"`
			ScrapeInterval string `yaml:"scrape_interval"`
			StaticConfigs  []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "stack/prometheus.yml", &cfg)
	if len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("scrape_configs = %+v, want one job", cfg.ScrapeConfigs)
	}
	sc := cfg.ScrapeConfigs[0]
	if sc.JobName != "agentwork-demo" || sc.ScrapeInterval != "2s" {
		t.Errorf("job %q interval %q, want agentwork-demo every 2s", sc.JobName, sc.ScrapeInterval)
	}
	if len(sc.StaticConfigs) != 1 || !slices.Equal(sc.StaticConfigs[0].Targets, []string{"127.0.0.1:9464"}) {
		t.Errorf("targets = %+v, want [127.0.0.1:9464] (the demo's -metrics-addr)", sc.StaticConfigs)
	}
	found := false
	for _, rf := range cfg.RuleFiles {
		p := filepath.Join("stack", rf)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("rule file %s (relative to stack/): %v", rf, err)
		}
		if filepath.Clean(p) == filepath.Clean(rulesFile) {
			found = true
		}
	}
	if !found {
		t.Errorf("rule_files = %v, want the alerts file %s loaded", cfg.RuleFiles, rulesFile)
	}
}

func TestGrafanaProvisioning(t *testing.T) {
	var ds struct {
		Datasources []struct {
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, "stack/grafana/provisioning/datasources/agentwork.yaml", &ds)
	urls := map[string]string{}
	for _, d := range ds.Datasources {
		urls[d.Type] = d.URL
	}
	if urls["prometheus"] != "http://127.0.0.1:9090" || urls["jaeger"] != "http://127.0.0.1:16686" {
		t.Errorf("data sources = %v, want prometheus at http://127.0.0.1:9090 and jaeger at http://127.0.0.1:16686", urls)
	}

	var dp struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "stack/grafana/provisioning/dashboards/agentwork.yaml", &dp)
	if len(dp.Providers) != 1 || dp.Providers[0].Type != "file" || dp.Providers[0].Options.Path != "${AGENTWORK_DASHBOARDS_DIR}" {
		t.Errorf("providers = %+v, want one file provider reading ${AGENTWORK_DASHBOARDS_DIR}", dp.Providers)
	}
	// The directory the README tells users to point it at holds the dashboard.
	if _, err := os.Stat(filepath.Join("grafana", filepath.Base(OverviewFile))); err != nil {
		t.Error(err)
	}
}
