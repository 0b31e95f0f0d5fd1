package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/physd/physd/window"
)

// FuzzDecodeEstimate feeds arbitrary bytes to DecodeEstimate: it must not
// panic; it returns an estimate or an error, never both or neither; an
// accepted message has the estimate schema and passes the schema's value
// checks, and re-encodes, as the bus encodes, to a message that decodes
// to the same estimate and re-encodes to the same bytes. The committed
// corpus is in testdata/fuzz/FuzzDecodeEstimate.
func FuzzDecodeEstimate(f *testing.F) {
	for _, e := range sampleEstimates() {
		b, err := json.Marshal(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"schema":"physd.estimate/v1"}`))
	f.Add([]byte(`{"schema":"physd.estimate/v2","gamma0":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEstimate(data)
		if (e == nil) == (err == nil) {
			t.Fatalf("DecodeEstimate returned estimate %v and error %v", e != nil, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "estimate message: ") {
				t.Fatalf("error %q does not say what was decoded", err)
			}
			return
		}
		if e.Schema != SchemaEstimate {
			t.Fatalf("accepted schema %q", e.Schema)
		}
		if err := e.check(); err != nil {
			t.Fatalf("accepted an estimate the schema refuses: %v", err)
		}
		b, err := encodeLikeBus(e)
		if err != nil {
			t.Fatalf("accepted estimate does not encode: %v", err)
		}
		again, err := DecodeEstimate(b)
		if err != nil {
			t.Fatalf("re-encoded estimate is refused: %v\n%s", err, b)
		}
		if d := estimateDiff(e, again); d != "" {
			t.Fatalf("round trip changed the estimate: %s\n in  %s\n out %s", d, data, b)
		}
		b2, err := encodeLikeBus(again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("second encoding differs (%v):\n %s\n %s", err, b, b2)
		}
	})
}

// FuzzEstimateRoundTrip builds an Estimate from arbitrary numbers and
// strings, encodes it as the bus does and decodes it with DecodeEstimate.
// It checks that:
//
//   - the encoder refuses (with an error, never a panic) exactly the
//     estimates JSON cannot carry: a NaN or ±Inf among the top-level
//     numbers or the encoder's, or a window time outside the years
//     0–9999;
//   - whatever it encodes is valid JSON, which DecodeEstimate accepts
//     exactly when the values are ones the schema allows, and otherwise
//     refuses naming the field;
//   - decoding gives back every value, except that invalid UTF-8 in a
//     string becomes U+FFFD, and that a NaN or ±Inf in the certificate,
//     which window.Verdict writes as null (docs/schema/estimate.v1.json:
//     "non-finite numbers are null"), decodes as 0: a consumer using
//     DecodeEstimate cannot tell a null from a 0 there.
//
// The committed corpus is in testdata/fuzz/FuzzEstimateRoundTrip.
func FuzzEstimateRoundTrip(f *testing.F) {
	for _, e := range sampleEstimates() {
		c := e.Certificate
		f.Add(e.Camera, string(e.Regime), "", e.WindowStart.UnixNano(), int64(e.WindowEnd.Sub(e.WindowStart)), e.Frames,
			e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Zeta, e.Encoder.TrainMS, c.RelResidual, c.TrajectoryResidual, c.Coverage.Lo)
	}
	f.Add("cam1", "unstable", "poor fit", int64(0), int64(0), 0,
		math.NaN(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add("cam1", "underdamped", "", int64(0), int64(0), 0,
		1.0, 0.0, 0.0, 0.0, 0.0, 0.0, math.Inf(1), math.NaN(), math.Inf(-1))
	f.Fuzz(func(t *testing.T, camera, regime, reason string, startNS, lengthNS int64, frames int,
		g0, g0s, g1, g1s, zeta, trainMS, rel, traj, lo float64) {
		// Times as daemon/camera.go makes them: UTC, from the frames' wall clock.
		// A large lengthNS counts seconds instead, to reach years outside
		// 0–9999.
		start := time.Unix(0, startNS).UTC()
		end := start.Add(time.Duration(lengthNS))
		if lengthNS > 1<<40 || lengthNS < -(1<<40) {
			end = time.Unix(start.Unix()+lengthNS%(1<<40), 0).UTC()
		}
		e := Estimate{Schema: SchemaEstimate, Camera: camera, WindowStart: start, WindowEnd: end, Frames: frames, Events: 1,
			Gamma0: g0, Gamma0Sigma: g0s, Gamma1: g1, Gamma1Sigma: g1s, Fn: math.Sqrt(math.Abs(g0)) / (2 * math.Pi), FnSigma: g0s,
			Zeta: zeta, ZetaSigma: g1s, OmegaN: math.Sqrt(math.Abs(g0)), DampedFreq: zeta, Regime: regime, Certified: true,
			Certificate: window.Verdict{Status: window.Certified, Certified: true, RelResidual: rel, ResidualLag1: -rel,
				TrajectoryResidual: traj, Coverage: window.Coverage{Holds: true, Lo: lo, Hi: -lo, Width: rel, Levels: frames}},
			Encoder: EncoderInfo{Version: frames, TotalSteps: startNS, Steps: frames, TrainMS: trainMS}}
		if reason != "" {
			e.Certificate.Reasons = []string{reason}
		}

		data, err := encodeLikeBus(&e)
		refuse := !allFinite(g0, g0s, g1, g1s, zeta, trainMS, e.Fn, e.OmegaN) || !jsonYear(start) || !jsonYear(end)
		if err != nil {
			if !refuse {
				t.Fatalf("encoding refused an estimate JSON can carry: %v", err)
			}
			return
		}
		if refuse {
			t.Fatalf("encoded an estimate with a non-finite number or an unencodable time:\n%s", data)
		}
		if !json.Valid(data) {
			t.Fatalf("encoding produced invalid JSON:\n%s", data)
		}
		got, err := DecodeEstimate(data)
		if why := e.check(); why != nil {
			// Values the schema does not allow: the bus never sends them
			// (daemon/camera.go makes certified estimates only), and a consumer
			// is told which field is wrong.
			if err == nil || !strings.HasPrefix(err.Error(), "estimate message: field ") {
				t.Fatalf("estimate with %v decoded as %v, %v; want an error naming the field", why, got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("the bus's encoding is refused by DecodeEstimate: %v\n%s", err, data)
		}
		want := e
		// What the encoding changes on purpose: invalid UTF-8 becomes
		// U+FFFD, and the certificate's non-finite numbers null.
		for _, s := range []struct {
			in       string
			got, out *string
		}{{camera, &got.Camera, &want.Camera}, {regime, &got.Regime, &want.Regime}} {
			if !utf8.ValidString(s.in) {
				if !utf8.ValidString(*s.got) {
					t.Fatalf("string %q decoded as invalid UTF-8 %q", s.in, *s.got)
				}
				*s.out = *s.got
			}
		}
		if !utf8.ValidString(reason) {
			if len(got.Certificate.Reasons) != 1 || !utf8.ValidString(got.Certificate.Reasons[0]) {
				t.Fatalf("reason %q decoded as %q", reason, got.Certificate.Reasons)
			}
			want.Certificate.Reasons = got.Certificate.Reasons
		}
		c := &want.Certificate
		for _, v := range []*float64{&c.RelResidual, &c.ResidualLag1, &c.TrajectoryResidual, &c.Coverage.Lo, &c.Coverage.Hi, &c.Coverage.Width} {
			if !allFinite(*v) {
				*v = math.NaN() // written as null, decoded as NaN
			}
		}
		g := &got.Certificate
		for i, v := range []float64{g.RelResidual, g.ResidualLag1, g.TrajectoryResidual, g.Coverage.Lo, g.Coverage.Hi, g.Coverage.Width} {
			w := []float64{c.RelResidual, c.ResidualLag1, c.TrajectoryResidual, c.Coverage.Lo, c.Coverage.Hi, c.Coverage.Width}[i]
			if math.IsNaN(v) != math.IsNaN(w) {
				t.Fatalf("certificate number %d decoded as %v, want %v", i, v, w)
			}
		}
		if d := estimateDiff(&want, got); d != "" {
			t.Fatalf("round trip changed the estimate: %s\n%s", d, data)
		}
	})
}

// encodeLikeBus encodes a message exactly as the daemon's bus.publish
// does: json.Marshal of the Message. (bus.publish has no separate
// encoding function to call; keep this in step with it.)
func encodeLikeBus(m Message) ([]byte, error) { return json.Marshal(m) }

// estimateDiff describes how b differs from a: times are compared as
// instants with the same encoding, the rest with reflect.DeepEqual.
func estimateDiff(a, b *Estimate) string {
	for _, p := range [][2]time.Time{{a.WindowStart, b.WindowStart}, {a.WindowEnd, b.WindowEnd}} {
		ta, _ := p[0].MarshalJSON()
		tb, _ := p[1].MarshalJSON()
		if !p[0].Equal(p[1]) || !bytes.Equal(ta, tb) {
			return "time " + string(ta) + " became " + string(tb)
		}
	}
	x, y := *a, *b
	x.WindowStart, x.WindowEnd, y.WindowStart, y.WindowEnd = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	// NaN (a null in the certificate) is not DeepEqual to itself; the
	// encodings, which write it as null, must still agree exactly.
	if !reflect.DeepEqual(x, y) && jsonString(x) != jsonString(y) {
		return "\n" + jsonString(x) + "\nbecame\n" + jsonString(y)
	}
	return ""
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func allFinite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// jsonYear reports whether t's year is one RFC 3339, and so
// time.Time.MarshalJSON, can write.
func jsonYear(t time.Time) bool { return t.Year() >= 0 && t.Year() <= 9999 }

// sampleEstimates are estimates as daemon/camera.go publishes them: a certified
// window whose certificate has finite numbers and whose amplitude is in
// millimetres too, and one with the NaNs a certificate may carry (no
// output-error fit, an empty interval) and an amplitude in pixels only.
func sampleEstimates() []Estimate {
	start := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	e := Estimate{Schema: SchemaEstimate, Camera: "cam1", WindowStart: start, WindowEnd: start.Add(10 * time.Second),
		Frames: 200, Events: 1, Gamma0: 4.0016, Gamma0Sigma: 0.003, Gamma1: 0.08, Gamma1Sigma: 0.001,
		Fn: 0.3184, FnSigma: 1e-4, Zeta: 0.02, ZetaSigma: 3e-4, OmegaN: 2.0004, DampedFreq: 0.3183, Regime: "underdamped",
		Certified: true, Certificate: window.Verdict{Status: window.Certified, Certified: true,
			Coverage: window.Coverage{Holds: true, Lo: -0.5, Hi: 0.7, Width: 0.6, MinWidth: 0.3, Levels: 9, Covered: 7,
				MaxDistinct: 4, SlopeTol: 0.01, NoiseZ: 0.002, Clips: 1, Rho: 0.6, UpsStar: 1.2},
			Conditioning: window.Conditioning{PsiMin: 0.4, PsiRaw: 0.3, G11: 1, G12: 0.01, G22: 0.25, RhoUps: 0.7, C1Tau2: 0.1, Boundary: 0.01, Bound: 0.2},
			RelResidual:  0.21, ResidualLag1: -0.6, TrajectoryResidual: 0.03, Revisit: window.Revisit{Score: 0.4, Levels: 7}},
		Encoder: EncoderInfo{Version: 1, TotalSteps: 120, Steps: 30, TrainMS: 41.5}}
	e.Amplitude = NewAmplitude(1.7, 0.03, "flow", 2.5)
	n := e
	n.Amplitude = NewAmplitude(0.4, 0.1, "flow", 0)
	n.WindowStart, n.WindowEnd = time.Unix(0, 0).UTC(), time.Unix(0, 1).UTC()
	n.Certificate.TrajectoryResidual, n.Certificate.Coverage.Lo, n.Certificate.Coverage.Hi = math.NaN(), math.NaN(), math.NaN()
	n.Certificate.RelResidual = math.Inf(1)
	n.Certificate.Reasons = []string{"poor fit"}
	return []Estimate{e, n}
}
