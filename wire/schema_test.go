package wire

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/window"
)

// TestMessagesMatchSchemas encodes every message kind (with the NaN an
// empty coverage interval carries) and checks it against the required
// fields and the schema constant of its JSON Schema in docs/schema.
func TestMessagesMatchSchemas(t *testing.T) {
	v := window.Verdict{Status: window.NotCertified, Reasons: []string{"x"}, Coverage: window.Coverage{Lo: math.NaN(), Hi: math.NaN()}, RelResidual: math.Inf(1)}
	now := time.Now().UTC()
	info := EncoderInfo{Version: 1}
	g := 4.0
	amp := NewAmplitude(1.2, 0.05, "flow", 0.5)
	mode := &Mode{Label: 2, Index: 2, Of: 2, Event: "seen", AmplitudePx: 0.3}
	modes := []ModeSummary{{Mode: *mode, Fn: 2.7, FnSigma: 0.01, Zeta: 0.02, ZetaSigma: 0.002, Certified: true}}
	msgs := map[string]any{
		"estimate.v1.json":   Estimate{Schema: SchemaEstimate, Node: "b1", Camera: "c", Bin: 2, WindowStart: now, WindowEnd: now, Certified: true, Certificate: v, Encoder: info, Regime: "underdamped", Amplitude: amp, Mode: mode},
		"diagnostic.v1.json": Diagnostic{Schema: SchemaDiagnostic, Node: "b1", Camera: "c", Bin: 2, WindowStart: now, WindowEnd: now, Verdict: "not-certified", Gamma0: &g, Certificate: &v, Encoder: &info, Amplitude: amp, Modes: modes},
		"status.v1.json":     Status{Schema: SchemaStatus, Node: "b1", Camera: "c", Time: now, State: "online", Windows: map[string]int{"certified": 1}},
		"alert.v1.json": Alert{Schema: SchemaAlert, Node: "b1", Camera: "c", Time: now, State: "raised", Reasons: []string{"drift"}, Baseline: Baseline{Fn: 1, Since: now}, Mode: mode,
			Evidence: []EvidenceFile{{Kind: "figure", Name: "c/x.png", SHA256: strings.Repeat("0", 64), Bytes: 1}, {Kind: "clip", Name: "c/x.mp4", Pending: true}}},
		"evidence.v1.json": Evidence{Schema: SchemaEvidence, Node: "b1", Camera: "c", Mode: mode, Alert: "b1.c.alert-raised.1.2", AlertTime: now, Time: now,
			Files: []EvidenceFile{{Kind: "clip", Name: "c/x.mp4", SHA256: strings.Repeat("0", 64), Bytes: 1, Start: now, End: now, Codec: "video/H264", Copied: true}}},
	}
	for file, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", file))
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, k := range schema.Required {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: required %q missing from %s", file, k, b)
			}
		}
		for k := range got {
			if _, ok := schema.Properties[k]; !ok {
				t.Errorf("%s: message field %q is not in the schema", file, k)
			}
		}
		var c struct{ Const string }
		_ = json.Unmarshal(schema.Properties["schema"], &c)
		if got["schema"] != c.Const {
			t.Errorf("%s: schema %v, file says %q", file, got["schema"], c.Const)
		}
	}
}

// TestDecodeEstimateChecks: a valid estimate decodes; dropping any field
// the schema file requires, or breaking any value it constrains, is
// refused with an error naming the field.
func TestDecodeEstimateChecks(t *testing.T) {
	now := time.Now().UTC()
	e := Estimate{Schema: SchemaEstimate, Camera: "cable", WindowStart: now, WindowEnd: now.Add(4 * time.Second), Frames: 80, Events: 1,
		Gamma0: 4, Gamma0Sigma: 0.01, Gamma1: 0.08, Gamma1Sigma: 0.002, Fn: 0.318, FnSigma: 0.001, Zeta: 0.02, ZetaSigma: 0.001,
		OmegaN: 2, DampedFreq: 0.318, Regime: "underdamped", Certified: true,
		Certificate: window.Verdict{Status: window.Certified, Certified: true}, Encoder: EncoderInfo{Version: 1}}
	good, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeEstimate(good); err != nil {
		t.Fatalf("valid estimate refused: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "estimate.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct{ Required []string }
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, k := range schema.Required {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(good, &m)
		delete(m, k)
		b, _ := json.Marshal(m)
		_, err := DecodeEstimate(b)
		want := "field " + k + ": missing"
		if k == "schema" {
			want = "schema \"\""
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without %s: %v, want an error containing %q", k, err, want)
		}
	}
	for _, tc := range []struct {
		field string
		bad   func(*Estimate)
	}{
		{"camera", func(e *Estimate) { e.Camera = "a.b" }},
		{"camera", func(e *Estimate) { e.Camera = "" }},
		{"window_end", func(e *Estimate) { e.WindowEnd = e.WindowStart.Add(-time.Second) }},
		{"frames", func(e *Estimate) { e.Frames = 0 }},
		{"events", func(e *Estimate) { e.Events = -1 }},
		{"bin", func(e *Estimate) { e.Bin = 1 }},
		{"bin", func(e *Estimate) { e.Bin = -2 }},
		{"certified", func(e *Estimate) { e.Certified = false }},
		{"gamma0_sigma", func(e *Estimate) { e.Gamma0Sigma = -1 }},
		{"zeta_sigma", func(e *Estimate) { e.ZetaSigma = -0.5 }},
		{"regime", func(e *Estimate) { e.Regime = "wobbly" }},
	} {
		b := e
		tc.bad(&b)
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeEstimate(data)
		if err == nil || !strings.HasPrefix(err.Error(), "estimate message: field "+tc.field+": ") {
			t.Errorf("bad %s: %v, want an error naming the field", tc.field, err)
		}
	}
}
