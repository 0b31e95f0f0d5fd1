package wire

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every field an ambient estimate carries is in the schema's ambient
// object, and what was not measured is absent rather than NaN.
func TestAmbientSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "estimate.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	def := schema.Defs["ambient"]
	fields := func(a *Ambient) map[string]any {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	full := fields(NewAmbient(600, 18000, 120, 4, 20, 2.9, 0.001, 0.002).WithResolves(0.03).WithPeak(-0.01, 0.004))
	for k := range full {
		if _, ok := def.Properties[k]; !ok {
			t.Errorf("field %q is not in the schema's ambient object", k)
		}
	}
	for _, k := range append(def.Required, "peak", "peak_sigma", "resolves_hz") {
		if _, ok := full[k]; !ok {
			t.Errorf("field %q is missing from %v", k, full)
		}
	}
	for _, c := range [][2]float64{{math.NaN(), 0.004}, {-0.01, 0}, {-0.01, math.Inf(1)}, {math.Inf(-1), 1}} {
		m := fields(NewAmbient(600, 18000, 120, 4, 20, 2.9, 0.001, 0.002).WithPeak(c[0], c[1]))
		if _, ok := m["peak"]; ok {
			t.Errorf("WithPeak(%v, %v): peak %v present, want absent", c[0], c[1], m["peak"])
		}
		if _, ok := m["peak_sigma"]; ok {
			t.Errorf("WithPeak(%v, %v): peak_sigma present, want absent", c[0], c[1])
		}
	}
}

// A mode beyond the first is published on its own subject and id, which
// ParseSubject reads back; mode 1 keeps a camera's subjects and ids.
func TestModeSubjects(t *testing.T) {
	start := time.Unix(100, 0).UTC()
	e1 := &Estimate{Node: "b1", Camera: "cable", WindowStart: start, WindowEnd: start.Add(time.Minute), Mode: &Mode{Label: 1, Index: 1, Of: 2}}
	e2 := &Estimate{Node: "b1", Camera: "cable", WindowStart: start, WindowEnd: start.Add(time.Minute), Mode: &Mode{Label: 2, Index: 2, Of: 2}}
	plain := &Estimate{Node: "b1", Camera: "cable", WindowStart: start, WindowEnd: start.Add(time.Minute)}
	if s := SubjectOf("physd", e1); s != "physd.cable.estimate" {
		t.Errorf("mode 1: subject %s", s)
	}
	if s := SubjectOf("physd", e2); s != "physd.modes.cable.estimate.m2" {
		t.Errorf("mode 2: subject %s", s)
	}
	if e1.ID() != plain.ID() || e2.ID() == e1.ID() {
		t.Errorf("ids: mode 1 %s, mode 2 %s, no mode %s", e1.ID(), e2.ID(), plain.ID())
	}
	zoned := &Alert{Camera: "bridge", Zone: "left", State: AlertRaised, Mode: &Mode{Label: 3}}
	s := SubjectOf("site.physd", zoned)
	cam, zone, kind, err := ParseSubject("site.physd", s)
	if s != "site.physd.modes.bridge.left.alert.m3" || err != nil || cam != "bridge" || zone != "left" || kind != KindAlert {
		t.Errorf("zone's mode 3 alert: %s → %q %q %q %v", s, cam, zone, kind, err)
	}
}
