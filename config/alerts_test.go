package config

import (
	"strings"
	"testing"
	"time"
)

// The alerts' chart and covariates decode, and each bad setting is
// refused naming its field: an unknown method, λ out of range, clear not
// below limit, a term reading an undeclared covariate, a covariate named
// twice, a subject on physd's own subjects (the board's subscriber key
// may publish a covariate's subject) or with a wildcard.
func TestAlertsChartConfig(t *testing.T) {
	cfg, errs := loadText(t, `
alerts:
  method: chart
  chart: {baseline: 72h, interval: 30m, lambda: 0.2, limit: 5, clear: 2, consecutive: 3, terms: [temperature, temperature^2, temperature*wind]}
  covariates:
    - {name: temperature, subject: env.bridge.temperature, max_age: 1h}
    - {name: wind, file: /run/sensors/wind}
`)
	if errs != nil {
		t.Fatal(errs)
	}
	a := cfg.Alerts
	if !a.IsChart() || a.Chart.Baseline != 72*time.Hour || a.Chart.Interval != 30*time.Minute || len(a.Chart.Terms) != 3 ||
		len(a.Covariates) != 2 || a.Covariates[0].Subject != "env.bridge.temperature" || a.Covariates[1].File != "/run/sensors/wind" {
		t.Errorf("decoded %+v", a)
	}
	for _, tc := range []struct{ text, field string }{
		{"alerts: {method: percent}", "alerts.method"},
		{"alerts: {chart: {lambda: 1.5}}", "alerts.chart.lambda"},
		{"alerts: {chart: {limit: 3, clear: 3}}", "alerts.chart.clear"},
		{"alerts: {chart: {terms: [humidity]}}", "alerts.chart.terms[0]"},
		{"alerts: {chart: {terms: ['temperature*']}}", "alerts.chart.terms[0]"},
		{"alerts: {covariates: [{name: t}, {name: t}]}", "alerts.covariates[1].name"},
		{"alerts: {covariates: [{name: t, subject: physd.t}]}", "alerts.covariates[0].subject"},
		{"alerts: {covariates: [{name: t, subject: 'env.>'}]}", "alerts.covariates[0].subject"},
		{"alerts: {covariates: [{name: 'a b'}]}", "alerts.covariates[0].name"},
	} {
		_, errs := loadText(t, tc.text)
		if !strings.Contains(strings.Join(errs, "\n"), tc.field) {
			t.Errorf("%s: errors %q, want one naming %s", tc.text, errs, tc.field)
		}
	}
}
