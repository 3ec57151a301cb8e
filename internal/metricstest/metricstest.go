// Package metricstest holds the test helpers for Prometheus endpoints that
// the server's and server/metrics' tests share: scrape a handler, find a
// sample by its labels, check its value.
package metricstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape GETs /metrics from h and parses the text exposition.
func Scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", rec.Code, rec.Body.String())
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// Get GETs path from h and returns the status and body.
func Get(t testing.TB, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// Find returns the first sample of family name whose labels include all of
// labels (name=value pairs), or nil.
func Find(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
next:
	for _, m := range fams[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// Value returns the value of the sample Find finds (a summary's or
// histogram's sample count); ok is false if there is none.
func Value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	m := Find(fams, name, labels...)
	switch {
	case m == nil:
		return 0, false
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount()), true
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount()), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// Want fails the test unless the sample exists with value want.
func Want(t testing.TB, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := Value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: missing", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}
