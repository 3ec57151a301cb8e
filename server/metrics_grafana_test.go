package server

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"streamd/internal/metricstest"
)

// TestGrafanaDashboard checks deploy/grafana/streamd.json: valid JSON, a
// recent schema, a Prometheus data-source variable used by every panel, and
// every streamd_* (and go_*/process_*) metric its expressions name present
// in a real scrape of a durable server that ran a small workload.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana/streamd.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		SchemaVersion int `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
		Panels []struct {
			Type, Title string
			Datasource  struct{ Type, UID string }
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if dash.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d", dash.SchemaVersion)
	}
	hasDS := false
	for _, v := range dash.Templating.List {
		hasDS = hasDS || v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	}
	if !hasDS {
		t.Error("no Prometheus data-source variable named datasource")
	}

	srv, addr := startDurableServer(t, nil)
	c := dial(t, addr)
	metricsDo(t, c,
		[]string{"XADD", "s", "*", "f", "v"},
		[]string{"XGROUP", "CREATE", "s", "g", "0"},
		[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
	)
	if r, err := c.Do("XGROUP", "CREATE", "s", "g", "0"); err != nil || r.Kind != '-' {
		t.Fatalf("second XGROUP CREATE = %v, %v; want BUSYGROUP", r, err)
	}
	fams := metricstest.Scrape(t, srv.MetricsHandler())

	nameRE := regexp.MustCompile(`\b((?:streamd|go|process)_[a-z0-9_]+)`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want the variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range nameRE.FindAllStringSubmatch(tg.Expr, -1) {
				used[m[1]] = true
			}
		}
	}
	if len(used) < 30 {
		t.Errorf("dashboard names only %d metrics", len(used))
	}
	var missing []string
	for name := range used {
		if !scraped(fams, name) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics used by the dashboard but not in the scrape: %v", missing)
	}
}

// scraped reports whether name is a family in fams, or a histogram's
// _bucket/_sum/_count series of one.
func scraped(fams map[string]*dto.MetricFamily, name string) bool {
	if f := fams[name]; f != nil && len(f.GetMetric()) > 0 {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f := fams[base]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM && len(f.GetMetric()) > 0 {
				return true
			}
		}
	}
	return false
}
