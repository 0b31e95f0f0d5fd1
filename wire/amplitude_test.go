package wire

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/window"
)

// amplitudeEstimate is a valid certified estimate carrying a.
func amplitudeEstimate(a *Amplitude) Estimate {
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	return Estimate{Schema: SchemaEstimate, Node: "b1", Camera: "bridge", Zone: "left", WindowStart: start, WindowEnd: start.Add(10 * time.Second),
		Frames: 200, Events: 1, Gamma0: 4, Gamma0Sigma: 0.01, Gamma1: 0.08, Gamma1Sigma: 0.002, Fn: 0.318, FnSigma: 0.001,
		Zeta: 0.02, ZetaSigma: 0.001, OmegaN: 2, DampedFreq: 0.318, Regime: "underdamped", Certified: true,
		Certificate: window.Verdict{Status: window.Certified, Certified: true}, Encoder: EncoderInfo{Version: 1}, Amplitude: a}
}

// TestNewAmplitude: the millimetres are the pixels times the scale, and
// come only with a scale; an amplitude JSON cannot carry is none.
func TestNewAmplitude(t *testing.T) {
	a := NewAmplitude(2.5, 0.04, "flow", 1.5)
	if a == nil || a.Px != 2.5 || a.NoisePx != 0.04 || a.Readout != "flow" || a.MM == nil || *a.MM != 3.75 ||
		a.NoiseMM == nil || math.Abs(*a.NoiseMM-0.06) > 1e-15 || a.MMPerPx == nil || *a.MMPerPx != 1.5 {
		t.Errorf("NewAmplitude(2.5, 0.04, flow, 1.5) = %+v", a)
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if a := NewAmplitude(2.5, 0.04, "flow", s); a == nil || a.MM != nil || a.NoiseMM != nil || a.MMPerPx != nil {
			t.Errorf("scale %v: %+v, want pixels only", s, a)
		}
	}
	for _, v := range [][2]float64{{math.NaN(), 0}, {1, math.Inf(1)}, {-1, 0}, {1, -0.1}} {
		if a := NewAmplitude(v[0], v[1], "flow", 1); a != nil {
			t.Errorf("NewAmplitude(%v, %v) = %+v, want nil", v[0], v[1], a)
		}
	}
	if a := NewAmplitude(0, 0, "flow", 2); a == nil || a.MM == nil || *a.MM != 0 {
		t.Errorf("a still region's amplitude is 0 mm, not absent: %+v", a)
	}
}

// TestAmplitudeJSON: the amplitude's JSON with and without a scale, in an
// estimate and a diagnostic; each decodes back to itself, DecodeEstimate
// accepts it, and the message's id does not change with it.
func TestAmplitudeJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *Amplitude
		json string
	}{
		{"pixels", NewAmplitude(2.5, 0.04, "flow", 0), `{"px":2.5,"noise_px":0.04,"readout":"flow"}`},
		{"millimetres", NewAmplitude(2.5, 0.04, "flow", 1.5), `{"px":2.5,"noise_px":0.04,"mm":3.75,"noise_mm":0.06,"mm_per_px":1.5,"readout":"flow"}`},
		{"held by the codec", &Amplitude{Px: 0.2, NoisePx: 0.04, Readout: "flow", HeldShare: 0.43}, `{"px":0.2,"noise_px":0.04,"readout":"flow","held_share":0.43}`},
	} {
		b, err := json.Marshal(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.json {
			t.Errorf("%s: JSON\n got %s\nwant %s", tc.name, b, tc.json)
		}
		e := amplitudeEstimate(tc.a)
		data, err := encodeLikeBus(&e)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), `,"amplitude":`+tc.json+`}`) {
			t.Errorf("%s: estimate JSON %s does not end with the amplitude", tc.name, data)
		}
		got, err := DecodeEstimate(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got.Amplitude, tc.a) {
			t.Errorf("%s: decoded amplitude %+v, want %+v", tc.name, got.Amplitude, tc.a)
		}
		without := amplitudeEstimate(nil)
		if e.ID() != without.ID() {
			t.Errorf("%s: id %s, without the amplitude %s", tc.name, e.ID(), without.ID())
		}
		d := Diagnostic{Schema: SchemaDiagnostic, Camera: "bridge", WindowStart: e.WindowStart, WindowEnd: e.WindowEnd, Frames: 200, Events: 1,
			Verdict: "not-certified", Amplitude: tc.a}
		db, err := encodeLikeBus(&d)
		if err != nil {
			t.Fatal(err)
		}
		var back Diagnostic
		if err := json.Unmarshal(db, &back); err != nil || !reflect.DeepEqual(back.Amplitude, tc.a) {
			t.Errorf("%s: diagnostic %s decoded amplitude %+v (%v)", tc.name, db, back.Amplitude, err)
		}
		nd := d
		nd.Amplitude = nil
		if d.ID() != nd.ID() {
			t.Errorf("%s: diagnostic id %s, without the amplitude %s", tc.name, d.ID(), nd.ID())
		}
	}
	// Without an amplitude the key is absent: the pinned messages hold.
	e := amplitudeEstimate(nil)
	if b, _ := json.Marshal(&e); strings.Contains(string(b), "amplitude") {
		t.Errorf("an estimate without an amplitude has the key: %s", b)
	}
}

// TestDecodeEstimateAmplitude: the amplitude's constraints are checked,
// naming the field.
func TestDecodeEstimateAmplitude(t *testing.T) {
	for _, tc := range []struct {
		amplitude, field string
	}{
		{`{"px":-1,"noise_px":0,"readout":"flow"}`, "amplitude.px"},
		{`{"px":1,"noise_px":-0.5,"readout":"flow"}`, "amplitude.noise_px"},
		{`{"px":1,"noise_px":0.1,"readout":"flow","held_share":-0.1}`, "amplitude.held_share"},
		{`{"px":1,"noise_px":0.1,"readout":"flow","held_share":1.5}`, "amplitude.held_share"},
		{`{"px":1,"noise_px":0.1,"mm":2,"readout":"flow"}`, "amplitude.noise_mm"},
		{`{"px":1,"noise_px":0.1,"mm":2,"noise_mm":0.2,"readout":"flow"}`, "amplitude.mm_per_px"},
		{`{"px":1,"noise_px":0.1,"mm":2,"noise_mm":0.2,"mm_per_px":0,"readout":"flow"}`, "amplitude.mm_per_px"},
		{`{"px":1,"noise_px":0.1,"mm":-2,"noise_mm":0.2,"mm_per_px":2,"readout":"flow"}`, "amplitude.mm"},
	} {
		e := amplitudeEstimate(nil)
		b, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		data := strings.TrimSuffix(string(b), "}") + `,"amplitude":` + tc.amplitude + "}"
		_, err = DecodeEstimate([]byte(data))
		if err == nil || !strings.HasPrefix(err.Error(), "estimate message: field "+tc.field+": ") {
			t.Errorf("%s: %v, want an error naming %s", tc.amplitude, err, tc.field)
		}
	}
}

// TestAmplitudeSchema: the amplitude's fields are those of its JSON
// Schema ($defs/amplitude), whose required ones every amplitude has.
func TestAmplitudeSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "schema", "estimate.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       struct {
			Amplitude struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"amplitude"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["amplitude"]; !ok {
		t.Error("estimate.v1.json has no amplitude property")
	}
	def := schema.Defs.Amplitude
	held := NewAmplitude(1, 0.1, "flow", 0)
	held.HeldShare = 0.4
	for _, a := range []*Amplitude{NewAmplitude(1, 0.1, "flow", 0), NewAmplitude(1, 0.1, "flow", 2), held} {
		b, _ := json.Marshal(a)
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if _, ok := def.Properties[k]; !ok {
				t.Errorf("amplitude field %q is not in $defs/amplitude", k)
			}
		}
		for _, k := range def.Required {
			if _, ok := got[k]; !ok {
				t.Errorf("required %q missing from %s", k, b)
			}
		}
	}
	keys := make([]string, 0, len(def.Properties))
	for k := range def.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"held_share", "mm", "mm_per_px", "noise_mm", "noise_px", "px", "readout"}; !slices.Equal(keys, want) {
		t.Errorf("$defs/amplitude has %v, want %v", keys, want)
	}
}
