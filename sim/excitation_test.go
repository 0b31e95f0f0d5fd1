package sim

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// autocorr returns the sample autocorrelation of x (mean removed)
// normalised by lag 0, for lags 0..maxLag.
func autocorr(x []float64, maxLag int) []float64 {
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	r := make([]float64, maxLag+1)
	for l := range r {
		for k := l; k < len(x); k++ {
			r[l] += (x[k] - mean) * (x[k-l] - mean)
		}
	}
	for l := len(r) - 1; l >= 0; l-- {
		r[l] /= r[0]
	}
	return r
}

func rms(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// TestExcitationAmbient: a 30-minute ambient mode has the RMS it was given
// and the autocorrelation of a white-noise-driven oscillator,
// ρ(τ) = e^{−ζωτ}(cos ω_dτ + ζ/√(1−ζ²)·sin ω_dτ); its path depends on the
// seed only.
func TestExcitationAmbient(t *testing.T) {
	s := Structure{W: 64, H: 64, FPS: 30, Duration: 1800, Seed: 11, Excitation: ExcitationAmbient,
		Modes: []Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: 1, Phase: 2}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := s.Displacement(s.Times())
	if len(d) != 54000 {
		t.Fatalf("%d samples, want 54000", len(d))
	}
	if r := rms(d); math.Abs(r-1) > 0.1 {
		t.Errorf("RMS %v px, want 1 ± 10 %%", r)
	}
	m := s.Modes[0]
	w, z := m.Omega(), m.Zeta
	wd := w * math.Sqrt(1-z*z)
	worst := 0.0
	for l, r := range autocorr(d, 150) {
		tau := float64(l) / s.FPS
		want := math.Exp(-z*w*tau) * (math.Cos(wd*tau) + z/math.Sqrt(1-z*z)*math.Sin(wd*tau))
		worst = math.Max(worst, math.Abs(r-want))
		if math.Abs(r-want) > 0.1 {
			t.Errorf("ρ(%.3f s) = %.3f, theory %.3f", tau, r, want)
		}
	}
	t.Logf("largest autocorrelation error up to 5 s: %.3f", worst)
	d2 := s.Displacement(s.Times())
	for k := range d {
		if d[k] != d2[k] {
			t.Fatalf("second call differs at %d: %v vs %v", k, d[k], d2[k])
		}
	}
	s.Seed = 12
	if d3 := s.Displacement(s.Times()); d3[0] == d[0] || d3[100] == d[100] {
		t.Errorf("seeds 11 and 12 give the same path: %v %v", d3[:2], d[:2])
	}
}

// expm returns e^{M} by scaling and squaring a 30-term Taylor series.
func expm(m [2][2]float64) [2][2]float64 {
	const sq = 10
	sc := math.Ldexp(1, -sq)
	a := [2][2]float64{{m[0][0] * sc, m[0][1] * sc}, {m[1][0] * sc, m[1][1] * sc}}
	mul := func(x, y [2][2]float64) (r [2][2]float64) {
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				r[i][j] = x[i][0]*y[0][j] + x[i][1]*y[1][j]
			}
		}
		return r
	}
	e, term := [2][2]float64{{1, 0}, {0, 1}}, [2][2]float64{{1, 0}, {0, 1}}
	for n := 1; n <= 30; n++ {
		term = mul(term, a)
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				term[i][j] /= float64(n)
				e[i][j] += term[i][j]
			}
		}
	}
	for i := 0; i < sq; i++ {
		e = mul(e, e)
	}
	return e
}

// TestExcitationDiscretisation checks Φ against a Taylor-series matrix
// exponential of A and Q = P − ΦPΦᵀ against a Simpson integral of
// e^{As}BBᵀe^{Aᵀs}, q = 4ζω³σ².
func TestExcitationDiscretisation(t *testing.T) {
	for _, c := range []struct{ fn, zeta, sigma, dt float64 }{
		{1, 0.02, 1, 1.0 / 30}, {3.7, 0.3, 0.4, 0.01}, {0.2, 0.001, 2, 0.5}, {10, 0.9, 1, 1.0 / 25},
	} {
		w := 2 * math.Pi * c.fn
		phi := sdofPhi(w, c.zeta, c.dt)
		want := expm([2][2]float64{{0, c.dt}, {-w * w * c.dt, -2 * c.zeta * w * c.dt}})
		q := sdofQ(w, c.sigma, phi)
		intensity := 4 * c.zeta * w * w * w * c.sigma * c.sigma
		// Simpson over n intervals of Φ(s)·diag(0, q)·Φ(s)ᵀ.
		const n = 2000
		var num [2][2]float64
		for i := 0; i <= n; i++ {
			wt := 2.0
			switch {
			case i == 0 || i == n:
				wt = 1
			case i%2 == 1:
				wt = 4
			}
			p := sdofPhi(w, c.zeta, c.dt*float64(i)/n)
			for a := 0; a < 2; a++ {
				for b := 0; b < 2; b++ {
					num[a][b] += wt * c.dt / (3 * n) * intensity * p[a][1] * p[b][1]
				}
			}
		}
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				scale := math.Abs(want[0][0]) + math.Abs(want[1][1]) + math.Abs(want[a][b])
				if math.Abs(phi[a][b]-want[a][b]) > 1e-10*scale {
					t.Errorf("%+v: Φ[%d][%d] = %v, e^{AΔ} gives %v", c, a, b, phi[a][b], want[a][b])
				}
				qs := math.Sqrt(num[a][a] * num[b][b])
				if math.Abs(q[a][b]-num[a][b]) > 1e-7*qs {
					t.Errorf("%+v: Q[%d][%d] = %v, the integral gives %v", c, a, b, q[a][b], num[a][b])
				}
			}
		}
	}
}

// TestExcitationForcing: the forcing adds exactly its cosine, with no
// modes, to free modes and to an ambient path (which it leaves alone).
func TestExcitationForcing(t *testing.T) {
	f := &Harmonic{Hz: 2.5, AmplitudePx: 0.7, Phase: -1}
	cosine := func(tk float64) float64 { return 0.7 * math.Cos(2*math.Pi*2.5*tk-1) }
	s := Structure{Duration: 4, Forcing: f}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	tt := s.Times()
	for k, v := range s.Displacement(tt) {
		if v != cosine(tt[k]) {
			t.Fatalf("no modes: d[%d] = %v, want %v", k, v, cosine(tt[k]))
		}
	}
	for _, ex := range []Excitation{ExcitationFree, ExcitationAmbient} {
		s := Structure{Duration: 4, Seed: 5, Excitation: ex, Modes: []Mode{{Fn: 1.1, Zeta: 0.05, AmplitudePx: 1, Phase: 0.3}}}
		plain := s.Displacement(tt)
		s.Forcing = f
		for k, v := range s.Displacement(tt) {
			if math.Abs(v-plain[k]-cosine(tt[k])) > 1e-12 {
				t.Fatalf("%s: d[%d] − d_plain = %v, want %v", ex, k, v-plain[k], cosine(tt[k]))
			}
		}
	}
}

// bandPSD returns the Welch (Hann, segments of 512, half overlap) power
// spectrum of x averaged over bands of 16 bins, from bin 1.
func bandPSD(x []float64) []float64 {
	const seg, band = 512, 16
	psd := make([]float64, seg/2)
	for start := 0; start+seg <= len(x); start += seg / 2 {
		for f := 1; f < seg/2; f++ {
			var sum complex128
			for k := 0; k < seg; k++ {
				hann := 0.5 - 0.5*math.Cos(2*math.Pi*float64(k)/seg)
				sum += complex(hann*x[start+k], 0) * cmplx.Rect(1, -2*math.Pi*float64(f*k)/seg)
			}
			psd[f] += real(sum)*real(sum) + imag(sum)*imag(sum)
		}
	}
	var bands []float64
	for b := 1; b+band <= seg/2; b += band {
		s := 0.0
		for f := b; f < b+band; f++ {
			s += psd[f]
		}
		bands = append(bands, s/band)
	}
	return bands
}

// hasPeak reports whether a band of p rises more than 30 % above the band
// before it.
func hasPeak(p []float64) bool {
	for i := 1; i < len(p); i++ {
		if p[i] > 1.3*p[i-1] {
			return true
		}
	}
	return false
}

// TestExcitationColoured: the coloured noise has its RMS, the OU
// autocorrelation e^{−2π·f_c·τ} and a spectrum falling without a peak,
// where an ambient mode's spectrum has one.
func TestExcitationColoured(t *testing.T) {
	s := Structure{W: 64, H: 64, Duration: 1800, Seed: 2, Coloured: &ColouredNoise{RMSPx: 0.5, CornerHz: 0.5}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := s.Displacement(s.Times())
	if r := rms(d); math.Abs(r-0.5) > 0.05 {
		t.Errorf("RMS %v px, want 0.5 ± 10 %%", r)
	}
	for l, r := range autocorr(d, 60) {
		tau := float64(l) / 30
		if want := math.Exp(-2 * math.Pi * 0.5 * tau); math.Abs(r-want) > 0.05 {
			t.Errorf("ρ(%.3f s) = %.3f, want %.3f", tau, r, want)
		}
	}
	if p := bandPSD(d[:18000]); hasPeak(p) {
		t.Errorf("coloured noise has a spectral peak: %v", p)
	}
	amb := Structure{Duration: 600, Seed: 2, Excitation: ExcitationAmbient, Modes: []Mode{{Fn: 3, Zeta: 0.02, AmplitudePx: 0.5}}}
	if p := bandPSD(amb.Displacement(amb.Times())); !hasPeak(p) {
		t.Errorf("the peak test misses an ambient mode's resonance: %v", p)
	}
}

// TestExcitationImpulses: knocks on a free decay restart it from the
// knocked state; without knocks the free decay is bit for bit the same;
// on an ambient path the knocks add the response of a mode at rest.
func TestExcitationImpulses(t *testing.T) {
	m := Mode{Fn: 1.3, Zeta: 0.03, AmplitudePx: 1, Phase: 0.4}
	s := Structure{Duration: 60, Seed: 3, Modes: []Mode{m}, Impulses: &Impulses{PerMinute: 10, AmplitudePx: 0.5}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	knocks := s.KnockTimes()
	if len(knocks) < 3 {
		t.Fatalf("%d knocks in a minute at 10 a minute", len(knocks))
	}
	for _, k := range knocks {
		if f := k * 30; math.Abs(f-math.Round(f)) > 1e-9 {
			t.Errorf("knock at %v s is not a frame instant", k)
		}
	}
	if tr := s.Truth(); tr.Impulses == nil || len(tr.Impulses.KnockTimes) != len(knocks) || tr.Impulses.PerMinute != 10 {
		t.Errorf("Truth.Impulses = %+v", tr.Impulses)
	}
	tt := s.Times()
	d := s.Displacement(tt)
	// By hand: a free decay from (x, v) at τ is
	// x(t) = e^{−a s}(x cos ω_d s + (v + a x)/ω_d sin ω_d s), s = t − τ.
	w := m.Omega()
	a, wd := m.Zeta*w, w*math.Sqrt(1-m.Zeta*m.Zeta)
	state := func(x, v, s float64) (float64, float64) {
		e, c, sn := math.Exp(-a*s), math.Cos(wd*s), math.Sin(wd*s)
		return e * (x*c + (v+a*x)/wd*sn), e * (v*c - (w*w*x+a*v)/wd*sn)
	}
	x0, v0 := math.Cos(0.4), -a*math.Cos(0.4)-wd*math.Sin(0.4)
	tau, j := 0.0, 0
	for k, tk := range tt {
		for j < len(knocks) && knocks[j] <= tk {
			x0, v0 = state(x0, v0, knocks[j]-tau)
			v0 += 0.5 * w
			tau = knocks[j]
			j++
		}
		want, _ := state(x0, v0, tk-tau)
		if math.Abs(d[k]-want) > 1e-9 {
			t.Fatalf("d(%v) = %v, restarted by hand %v", tk, d[k], want)
		}
	}
	free := Structure{Duration: 60, Modes: []Mode{m}}.Displacement(tt)
	s.Impulses.PerMinute = 0
	for k, v := range s.Displacement(tt) {
		if math.Float64bits(v) != math.Float64bits(free[k]) {
			t.Fatalf("no knocks: d[%d] = %v, free %v", k, v, free[k])
		}
	}
	// Linearity on an ambient path.
	amb := Structure{Duration: 60, Seed: 3, Excitation: ExcitationAmbient, Modes: []Mode{m}}
	plain := amb.Displacement(tt)
	amb.Impulses = &Impulses{PerMinute: 10, AmplitudePx: 0.5}
	rest := Structure{Duration: 60, Seed: 3, Modes: []Mode{{Fn: m.Fn, Zeta: m.Zeta}}, Impulses: amb.Impulses}.Displacement(tt)
	for k, v := range amb.Displacement(tt) {
		if math.Abs(v-plain[k]-rest[k]) > 1e-12 {
			t.Fatalf("ambient with knocks: d[%d] − d_ambient = %v, knocks alone %v", k, v-plain[k], rest[k])
		}
	}
}

// TestExcitationValidate: each bad part is named.
func TestExcitationValidate(t *testing.T) {
	ok := Structure{Duration: 1, Excitation: ExcitationAmbient, Modes: []Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}},
		Forcing: &Harmonic{Hz: 3, AmplitudePx: 1}, Coloured: &ColouredNoise{RMSPx: 1, CornerHz: 1}, Impulses: &Impulses{PerMinute: 5, AmplitudePx: 1}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Structure)
	}{
		{"Excitation", func(s *Structure) { s.Excitation = "forced" }},
		{"Modes[0].Zeta", func(s *Structure) { s.Modes[0].Zeta = 0 }},
		{"Modes[0].AmplitudePx", func(s *Structure) { s.Modes[0].AmplitudePx = -1 }},
		{"Forcing.Hz", func(s *Structure) { s.Forcing.Hz = 0 }},
		{"Forcing.Hz", func(s *Structure) { s.Forcing.Hz = 15 }},
		{"Forcing.Hz", func(s *Structure) { s.Forcing.Hz = math.NaN() }},
		{"Forcing.AmplitudePx", func(s *Structure) { s.Forcing.AmplitudePx = -0.5 }},
		{"Forcing.AmplitudePx", func(s *Structure) { s.Forcing.AmplitudePx = 60 }},
		{"Forcing.Phase", func(s *Structure) { s.Forcing.Phase = math.Inf(1) }},
		{"Coloured.CornerHz", func(s *Structure) { s.Coloured.CornerHz = 0 }},
		{"Coloured.CornerHz", func(s *Structure) { s.Coloured.CornerHz = 20 }},
		{"Coloured.RMSPx", func(s *Structure) { s.Coloured.RMSPx = -1 }},
		{"Impulses.PerMinute", func(s *Structure) { s.Impulses.PerMinute = -1 }},
		{"Impulses.PerMinute", func(s *Structure) { s.Impulses.PerMinute = 1e9 }},
		{"Impulses.AmplitudePx", func(s *Structure) { s.Impulses.AmplitudePx = math.NaN() }},
	} {
		s := ok
		s.Modes = append([]Mode(nil), ok.Modes...)
		f, c, im := *ok.Forcing, *ok.Coloured, *ok.Impulses
		s.Forcing, s.Coloured, s.Impulses = &f, &c, &im
		tc.edit(&s)
		err := s.Validate()
		var se *StructureError
		if !errors.Is(err, ErrInvalidScene) || !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%s: got %v", tc.field, err)
		}
	}
	// Free modes may be undamped; forcing alone needs no modes.
	for _, s := range []Structure{
		{Duration: 1, Modes: []Mode{{Fn: 2, AmplitudePx: 1}}, Impulses: &Impulses{}},
		{Duration: 1, Excitation: ExcitationAmbient, Forcing: &Harmonic{Hz: 1}},
	} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	// Only the streaming path takes a clip larger than MaxClipPixels.
	long := Structure{W: 640, H: 480, Duration: 600, Excitation: ExcitationAmbient, Modes: ok.Modes}
	if err := long.Validate(); err == nil || !strings.Contains(err.Error(), "Duration") {
		t.Errorf("10 min of 640×480: Validate gave %v, want a Duration error", err)
	}
	if err := long.validate(true); err != nil {
		t.Errorf("10 min of 640×480 streamed: %v", err)
	}
}

// TestWriteStructureVideo: streaming in batches writes the same bytes as
// RenderStructure and WriteVideo, and the same displacement.
func TestWriteStructureVideo(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skipf("ffmpeg not installed: %v", err)
	}
	// Two workers: batches of 4 frames, so 30 frames take 8 batches.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	s := Structure{W: 47, H: 35, Duration: 1, Seed: 9, Object: ObjectCable, Excitation: ExcitationAmbient,
		Modes: []Mode{{Fn: 2, Zeta: 0.02, AmplitudePx: 0.8}}, Forcing: &Harmonic{Hz: 5, AmplitudePx: 0.3},
		Coloured: &ColouredNoise{RMSPx: 0.2, CornerHz: 1}, Impulses: &Impulses{PerMinute: 300, AmplitudePx: 0.5}}
	enc := Encoding{CRF: 20, GOP: 10}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "stream.mp4"), filepath.Join(dir, "whole.mp4")
	ctx := context.Background()
	da, err := WriteStructureVideo(ctx, a, s, enc)
	if err != nil {
		t.Fatal(err)
	}
	frames, db, err := RenderStructure(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteVideo(ctx, b, frames, 30, enc); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if len(ab) == 0 || !bytes.Equal(ab, bb) {
		t.Errorf("streamed %d bytes, whole %d bytes: not equal", len(ab), len(bb))
	}
	if len(da) != 30 || len(db) != 30 {
		t.Fatalf("%d and %d displacements, want 30", len(da), len(db))
	}
	for k := range da {
		if da[k] != db[k] {
			t.Fatalf("d[%d]: %v streamed, %v whole", k, da[k], db[k])
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	c := filepath.Join(dir, "cancelled.mp4")
	if _, err := WriteStructureVideo(cctx, c, s, enc); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(c); !os.IsNotExist(err) {
		t.Errorf("a cancelled run left %s: %v", c, err)
	}
	if _, err := WriteStructureVideo(ctx, c, Structure{Duration: 1, Forcing: &Harmonic{Hz: -1}}, enc); !errors.Is(err, ErrInvalidScene) {
		t.Errorf("invalid scene: %v", err)
	}
}
