package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// ExcitationAmbient drives every mode continuously, as wind and traffic
// drive a structure in operational modal analysis: mode m is the linear
// oscillator x″ + 2ζω x′ + ω² x = w_m(t) forced by its own independent
// stationary Gaussian white noise w_m, started in its stationary
// distribution, and Mode.AmplitudePx is its stationary RMS displacement
// in pixels (Phase is ignored). Its Zeta must be > 0.
const ExcitationAmbient Excitation = "ambient"

// Harmonic is a steady-state response to forcing at a fixed frequency (a
// machine running at a fixed speed): AmplitudePx·cos(2π·Hz·t + Phase)
// pixels added to the displacement.
type Harmonic struct {
	// Hz is the forcing frequency, > 0 and below FPS/2.
	Hz float64 `json:"hz"`
	// AmplitudePx is the response amplitude in pixels, ≥ 0.
	AmplitudePx float64 `json:"amplitude_px"`
	// Phase is the phase at t = 0 in radians.
	Phase float64 `json:"phase_rad"`
}

// ColouredNoise is broadband motion without a resonance: a stationary
// first-order low-pass Gaussian (Ornstein–Uhlenbeck) process of standard
// deviation RMSPx pixels and corner frequency CornerHz, whose
// autocorrelation is e^{−2π·CornerHz·|τ|}.
type ColouredNoise struct {
	// RMSPx is the standard deviation in pixels, ≥ 0.
	RMSPx float64 `json:"rms_px"`
	// CornerHz is the −3 dB frequency, > 0 and below FPS/2.
	CornerHz float64 `json:"corner_hz"`
}

// Impulses are knocks at the times of a Poisson process, rounded to frame
// instants: at each knock the velocity of every mode jumps by
// AmplitudePx·ω_m, so that a mode at rest then swings with about
// AmplitudePx pixels. They add to the free or the ambient response.
type Impulses struct {
	// PerMinute is the mean rate of knocks, 0..60·FPS.
	PerMinute float64 `json:"per_minute"`
	// AmplitudePx is the swing in pixels a knock gives a mode at rest, ≥ 0.
	AmplitudePx float64 `json:"amplitude_px"`
}

// ImpulsesTruth is the ground truth of Impulses: the rate, the amplitude
// and the knocks drawn.
type ImpulsesTruth struct {
	Impulses
	// KnockTimes are the knocks' times in seconds, frame instants, in
	// increasing order (two knocks may share one).
	KnockTimes []float64 `json:"knock_times_s"`
}

// Streams of the excitation's random draws (see streamNoise).
const (
	streamExcite   = 0x6578636974 // "excit": one PCG per mode
	streamColoured = 0x636f6c6f72 // "color"
	streamImpulses = 0x6b6e6f636b // "knock"
)

// sdofPhi returns the state transition Φ = e^{AΔ} of the oscillator
// x″ + 2ζω x′ + ω² x = 0, state (x, x′), A = [[0, 1], [−ω², −2ζω]], for
// 0 ≤ ζ < 1: with a = ζω and ω_d = ω√(1 − ζ²),
//
//	Φ = e^{−aΔ}·[[c + (a/ω_d)·s, s/ω_d], [−(ω²/ω_d)·s, c − (a/ω_d)·s]],  c = cos ω_dΔ, s = sin ω_dΔ.
func sdofPhi(omega, zeta, dt float64) [2][2]float64 {
	a := zeta * omega
	wd := omega * math.Sqrt(1-zeta*zeta)
	s, c := math.Sincos(wd * dt)
	e := math.Exp(-a * dt)
	return [2][2]float64{
		{e * (c + a/wd*s), e * s / wd},
		{-e * omega * omega / wd * s, e * (c - a/wd*s)},
	}
}

// sdofQ returns the covariance Q = ∫₀^Δ e^{As} B Bᵀ e^{Aᵀs} ds of the
// state noise the oscillator gathers over Δ when forced by white noise of
// intensity q = 4ζω³σ² (B = (0, √q)ᵀ), σ its stationary RMS displacement.
// The stationary covariance P = diag(σ², ω²σ²) solves the Lyapunov
// equation AP + PAᵀ + BBᵀ = 0, hence P = Φ P Φᵀ + Q exactly and
//
//	Q = P − Φ P Φᵀ,
//
// a closed form (ζ > 0).
func sdofQ(omega, sigma float64, phi [2][2]float64) [2][2]float64 {
	p0, p1 := sigma*sigma, omega*omega*sigma*sigma
	var q [2][2]float64
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			q[i][j] = -(phi[i][0]*p0*phi[j][0] + phi[i][1]*p1*phi[j][1])
		}
	}
	q[0][0] += p0
	q[1][1] += p1
	return q
}

// chol2 returns the lower Cholesky factor of a 2×2 covariance, treating
// the rounding of a nearly singular one as zero.
func chol2(q [2][2]float64) (l00, l10, l11 float64) {
	l00 = math.Sqrt(math.Max(q[0][0], 0))
	if l00 > 0 {
		l10 = q[1][0] / l00
	}
	l11 = math.Sqrt(math.Max(q[1][1]-l10*l10, 0))
	return l00, l10, l11
}

// ambientMode returns mode i's ambient response at the ascending times t:
// the state starts in its stationary distribution, x ~ N(0, σ²) and
// x′ ~ N(0, ω²σ²) independent, and between samples moves exactly as
//
//	(x, x′)_{k+1} = Φ(Δ_k)·(x, x′)_k + L·n_k,  L Lᵀ = Q(Δ_k),  n_k ~ N(0, I₂).
func (s Structure) ambientMode(t []float64, i int) []float64 {
	m := s.Modes[i]
	w, sigma := m.Omega(), math.Abs(m.AmplitudePx)
	// One stream per mode: adding a mode leaves the others' paths alone.
	rng := rand.New(rand.NewPCG(uint64(s.Seed), streamExcite^(uint64(i+1)*0x9e3779b97f4a7c15)))
	x := make([]float64, len(t))
	if len(t) == 0 {
		return x
	}
	p, v := sigma*rng.NormFloat64(), w*sigma*rng.NormFloat64()
	x[0] = p
	var phi [2][2]float64
	var l00, l10, l11 float64
	prev := math.NaN()
	for k := 1; k < len(t); k++ {
		if dt := t[k] - t[k-1]; dt != prev {
			phi = sdofPhi(w, m.Zeta, dt)
			l00, l10, l11 = chol2(sdofQ(w, sigma, phi))
			prev = dt
		}
		n0, n1 := rng.NormFloat64(), rng.NormFloat64()
		p, v = phi[0][0]*p+phi[0][1]*v+l00*n0, phi[1][0]*p+phi[1][1]*v+l10*n0+l11*n1
		x[k] = p
	}
	return x
}

// KnockTimes returns the times in seconds of the knocks of s.Impulses
// (nil without): a Poisson process of rate PerMinute/60 per second from
// t = 0, each time rounded to the nearest frame instant k/FPS, up to the
// last frame. They depend only on Seed, FPS, Duration and Impulses.
func (s Structure) KnockTimes() []float64 {
	if s.Impulses == nil || !(s.Impulses.PerMinute > 0) {
		return nil
	}
	d := s.WithDefaults()
	n := d.Frames()
	rate := d.Impulses.PerMinute / 60
	rng := rand.New(rand.NewPCG(uint64(d.Seed), streamImpulses))
	var knocks []float64
	// Exponential gaps of mean 1/rate between knocks.
	for t := rng.ExpFloat64() / rate; ; t += rng.ExpFloat64() / rate {
		k := math.Round(t * d.FPS)
		if !(k < float64(n)) {
			return knocks
		}
		knocks = append(knocks, k/d.FPS)
	}
}

// addKnocks adds to d the modes' responses to the knocks at the ascending
// times knocks: mode m's state starts at rest, gets x′ += AmplitudePx·ω_m
// at every knock and moves by Φ between them, so that after knock j at τ_j
//
//	(x, x′)(t) = Φ(t − τ_j)·(x, x′)(τ_j),  τ_j ≤ t < τ_{j+1}.
//
// The modes are linear, so this adds to the free or ambient response as a
// knock on the moving structure would. Times before the first knock are
// left untouched.
func (s Structure) addKnocks(d, t, knocks []float64) {
	if len(knocks) == 0 {
		return
	}
	for _, m := range s.Modes {
		w := m.Omega()
		jump := s.Impulses.AmplitudePx * w
		xs, vs := make([]float64, len(knocks)), make([]float64, len(knocks))
		x, v := 0.0, 0.0
		for j, tau := range knocks {
			if j > 0 {
				phi := sdofPhi(w, m.Zeta, tau-knocks[j-1])
				x, v = phi[0][0]*x+phi[0][1]*v, phi[1][0]*x+phi[1][1]*v
			}
			v += jump
			xs[j], vs[j] = x, v
		}
		for k, tk := range t {
			// j is the last knock at or before tk.
			j := sort.Search(len(knocks), func(j int) bool { return knocks[j] > tk }) - 1
			if j < 0 {
				continue
			}
			phi := sdofPhi(w, m.Zeta, tk-knocks[j])
			d[k] += phi[0][0]*xs[j] + phi[0][1]*vs[j]
		}
	}
}

// addColoured adds the Ornstein–Uhlenbeck process of s.Coloured at the
// ascending times t, started stationary and advanced exactly:
//
//	x_{k+1} = a·x_k + √(1 − a²)·σ·n_k,  a = e^{−2π·f_c·Δ_k},  n_k ~ N(0, 1).
func (s Structure) addColoured(d, t []float64) {
	c := s.Coloured
	if len(t) == 0 || c.RMSPx == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(s.Seed), streamColoured))
	x := c.RMSPx * rng.NormFloat64()
	d[0] += x
	for k := 1; k < len(t); k++ {
		a := math.Exp(-2 * math.Pi * c.CornerHz * (t[k] - t[k-1]))
		x = a*x + math.Sqrt(1-a*a)*c.RMSPx*rng.NormFloat64()
		d[k] += x
	}
}

// addForcing adds AmplitudePx·cos(2π·Hz·t + Phase) of s.Forcing.
func (s Structure) addForcing(d, t []float64) {
	f := s.Forcing
	for k, tk := range t {
		d[k] += f.AmplitudePx * math.Cos(2*math.Pi*f.Hz*tk+f.Phase)
	}
}

// validateExcitation checks the excitation's parts of s (after defaults
// d) and bounds the total amplitude, the modes' sumA plus the forcing's,
// the coloured noise's RMS and the knocks', to min(W,H)/4 so that the
// object stays in the frame.
func (s Structure) validateExcitation(d Structure, sumA float64) error {
	if s.Excitation == ExcitationAmbient {
		for i, m := range s.Modes {
			if !(m.Zeta > 0) {
				return structErr(fmt.Sprintf("Modes[%d].Zeta", i), "is %v, want > 0 for %s excitation (an undamped mode has no stationary response)", m.Zeta, ExcitationAmbient)
			}
			if m.AmplitudePx < 0 {
				return structErr(fmt.Sprintf("Modes[%d].AmplitudePx", i), "is %v, want ≥ 0 (the stationary RMS in px for %s excitation)", m.AmplitudePx, ExcitationAmbient)
			}
		}
	}
	nyq := d.FPS / 2
	type field struct {
		name string
		v    float64
	}
	var fields []field
	if f := s.Forcing; f != nil {
		fields = append(fields, field{"Forcing.Hz", f.Hz}, field{"Forcing.AmplitudePx", f.AmplitudePx}, field{"Forcing.Phase", f.Phase})
	}
	if c := s.Coloured; c != nil {
		fields = append(fields, field{"Coloured.RMSPx", c.RMSPx}, field{"Coloured.CornerHz", c.CornerHz})
	}
	if im := s.Impulses; im != nil {
		fields = append(fields, field{"Impulses.PerMinute", im.PerMinute}, field{"Impulses.AmplitudePx", im.AmplitudePx})
	}
	for _, f := range fields {
		if !finite(f.v) {
			return structErr(f.name, "is %v, want a finite number", f.v)
		}
	}
	short := float64(min(d.W, d.H))
	amp := func(name string, v float64) error {
		if v < 0 {
			return structErr(name, "is %v px, want ≥ 0", v)
		}
		if sumA += v; sumA > short/4 {
			return structErr(name, "is %v px, which brings the amplitudes' sum to %v px, want at most min(W,H)/4 = %v px", v, sumA, short/4)
		}
		return nil
	}
	freq := func(name string, v float64) error {
		if !(v > 0) || v >= nyq {
			return structErr(name, "is %v Hz, want 0 < f < FPS/2 = %v Hz (the Nyquist frequency)", v, nyq)
		}
		return nil
	}
	if f := s.Forcing; f != nil {
		if err := freq("Forcing.Hz", f.Hz); err != nil {
			return err
		}
		if err := amp("Forcing.AmplitudePx", f.AmplitudePx); err != nil {
			return err
		}
	}
	if c := s.Coloured; c != nil {
		if err := freq("Coloured.CornerHz", c.CornerHz); err != nil {
			return err
		}
		if err := amp("Coloured.RMSPx", c.RMSPx); err != nil {
			return err
		}
	}
	if im := s.Impulses; im != nil {
		if im.PerMinute < 0 || im.PerMinute > 60*d.FPS {
			return structErr("Impulses.PerMinute", "is %v, want 0..60·FPS = %v knocks a minute", im.PerMinute, 60*d.FPS)
		}
		if err := amp("Impulses.AmplitudePx", im.AmplitudePx); err != nil {
			return err
		}
	}
	return nil
}
