package sim

import (
	"context"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// ObjectKind names the structure a Structure scene shows.
type ObjectKind string

// The objects of a Structure scene. Each is drawn dark over a static
// textured background and moves rigidly along the scene's direction of
// motion, except the mast, which bends.
const (
	// ObjectBlock is a dark square (Size px a side, default min(W,H)/5
	// rounded) centred in the frame, hanging on a thin line (1.5 px) from
	// above the top of the frame; the line's lower end follows the block.
	// Default direction 0° (horizontal sway).
	ObjectBlock ObjectKind = "block"
	// ObjectCable is a straight dark line Size px wide (default 3) through
	// the frame centre, spanning the frame, perpendicular to the motion
	// (it moves across its length). Default direction 90° (a horizontal
	// cable moving vertically).
	ObjectCable ObjectKind = "cable"
	// ObjectBeam is the edge of a large region through the frame centre,
	// perpendicular to the motion: the beam fills the half-plane on the
	// side the direction points to and carries its own texture (Surface),
	// which moves with it, over the static background texture. Default
	// direction 90° (a horizontal edge with the beam below it, moving
	// vertically). Size does not apply.
	ObjectBeam ObjectKind = "beam"
	// ObjectMast is a dark pole Size px thick (default 8, or min(W,H)/4
	// in small frames), perpendicular
	// to the motion, rising from beyond the frame edge to a free tip at
	// 20 % of the frame from the opposite edge, bending as a cantilever:
	// at a fraction ξ of its length from the base it is displaced by
	// d·ξ²(3 − ξ)/2, so d is the tip displacement. Default direction 0° (a
	// vertical mast swaying horizontally).
	ObjectMast ObjectKind = "mast"
)

// Valid reports whether k is a known object (the empty kind is not).
func (k ObjectKind) Valid() bool {
	switch k {
	case ObjectBlock, ObjectCable, ObjectBeam, ObjectMast:
		return true
	}
	return false
}

// DefaultDirection returns the default direction of motion of an object
// in degrees (see Structure.Direction): 0 for the block and the mast, 90
// for the cable and the beam.
func (k ObjectKind) DefaultDirection() float64 {
	switch k {
	case ObjectCable, ObjectBeam:
		return 90
	}
	return 0
}

// Excitation names how a Structure's modes are driven.
type Excitation string

// ExcitationFree is a free decay from the modes' initial amplitudes and
// phases (see ExcitationAmbient for the other excitation).
const ExcitationFree Excitation = "free"

// Mode is one vibration mode of a Structure: a damped oscillator of
// natural frequency Fn and damping ratio Zeta whose free decay displaces
// the object by
//
//	d(t) = AmplitudePx·e^{−ζωt}·cos(ω_d·t + Phase),  ω = 2π·Fn, ω_d = ω·√(1 − ζ²),
//
// pixels along the direction of motion. d solves
// z″ + γ1 z′ + γ0 z = 0 with γ1 = 2ζω and γ0 = ω² (see Gammas).
type Mode struct {
	// Fn is the undamped natural frequency in Hz, > 0 and below the
	// Nyquist frequency FPS/2.
	Fn float64 `json:"fn_hz"`
	// Zeta is the damping ratio ζ, 0 ≤ ζ < 1.
	Zeta float64 `json:"zeta"`
	// AmplitudePx is the initial envelope A in pixels (d(0) = A·cos
	// Phase); with ExcitationAmbient, the stationary RMS displacement.
	AmplitudePx float64 `json:"amplitude_px"`
	// Phase is φ in radians (ignored by ExcitationAmbient).
	Phase float64 `json:"phase_rad"`
}

// Omega returns the natural angular frequency ω = 2π·Fn in rad/s.
func (m Mode) Omega() float64 { return 2 * math.Pi * m.Fn }

// Gammas returns the ground truth of the mode's ODE z″ + γ1 z′ + γ0 z = 0:
// γ1 = 2ζω and γ0 = ω², ω = 2π·Fn.
func (m Mode) Gammas() (gamma1, gamma0 float64) {
	w := m.Omega()
	return 2 * m.Zeta * w, w * w
}

// DampedHz returns the damped frequency f_d = Fn·√(1 − ζ²) in Hz.
func (m Mode) DampedHz() float64 { return m.Fn * math.Sqrt(1-m.Zeta*m.Zeta) }

// At returns the mode's free-decay displacement
// A·e^{−ζωt}·cos(ω_d·t + φ) in pixels at time t seconds.
func (m Mode) At(t float64) float64 {
	w := m.Omega()
	wd := w * math.Sqrt(1-m.Zeta*m.Zeta)
	return m.AmplitudePx * math.Exp(-m.Zeta*w*t) * math.Cos(wd*t+m.Phase)
}

// Defaults of a Structure.
const (
	// DefaultStructureW and DefaultStructureH are the frame size in
	// pixels when Structure.W or H is 0.
	DefaultStructureW, DefaultStructureH = 320, 240
	// DefaultStructureFPS is the frame rate when Structure.FPS is 0.
	DefaultStructureFPS = 30
	// DefaultNoise is the pixel noise (standard deviation, fraction of
	// full scale) when Structure.Noise is 0.
	DefaultNoise = 0.01
	// DefaultTextureScale is the finest texture lattice spacing in pixels
	// when a Texture's Scale is 0.
	DefaultTextureScale = 2
)

// Default background texture of a Structure: mean gray 0.6, standard
// deviation 0.12 (≈ 31 gray levels rms).
const (
	DefaultBackgroundMean     = 0.6
	DefaultBackgroundContrast = 0.12
)

// Structure describes a synthetic clip of a structure that vibrates by
// small amounts, as a fixed camera sees a cable, a beam, a mast or a
// hanging block: an object moves (rigidly, or bending for the mast) along
// one direction by the displacement d(t) of Displacement over a static,
// band-limited random background texture; Gaussian pixel noise is added
// before 8-bit quantisation. Zero fields select defaults (WithDefaults).
//
// The rendering is exact for sub-pixel motion: an object's pixels are its
// area coverage at the displaced position (analytic for the block, cable
// and beam; 8×8 sub-samples with a one-sub-sample ramp for the block's
// line and the mast), and a moving texture is a fixed continuous function
// sampled at the displaced positions.
type Structure struct {
	// W and H are the frame size in pixels; 0 selects DefaultStructureW
	// and DefaultStructureH.
	W, H int
	// FPS is the frame rate; 0 selects DefaultStructureFPS.
	FPS float64
	// Duration is the clip length in seconds: round(Duration·FPS) frames
	// at t_k = k/FPS.
	Duration float64
	// Seed drives the textures and the noise; the same scene and seed
	// give byte-identical frames.
	Seed int64
	// Object is the structure shown; "" selects ObjectBlock.
	Object ObjectKind
	// Size is the object's size in pixels: the block's side, the cable's
	// or the mast's thickness; 0 selects the object's default. It must be
	// 0 for the beam.
	Size float64
	// Direction is the direction of motion in degrees in image
	// coordinates: 0 moves to the right (+x), 90 down (+y), so positive d
	// moves the object by d·(cos θ, sin θ) pixels. The cable, beam and
	// mast are drawn perpendicular to it. nil selects
	// Object.DefaultDirection() (see Deg for a literal).
	Direction *float64
	// Modes are the vibration modes; d(t) is their sum. No modes give a
	// still scene.
	Modes []Mode
	// Excitation is how the modes are driven: ExcitationFree ("" selects
	// it) or ExcitationAmbient.
	Excitation Excitation
	// Forcing, if not nil, adds a harmonic steady-state response to d(t),
	// with any excitation and with no modes at all.
	Forcing *Harmonic
	// Coloured, if not nil, adds broadband motion without a resonance.
	Coloured *ColouredNoise
	// Impulses, if not nil, knocks every mode at random times.
	Impulses *Impulses
	// Noise is the standard deviation of the Gaussian pixel noise as a
	// fraction of full scale (0.01 ≈ 2.6 gray levels), drawn anew for
	// every frame; 0 selects DefaultNoise and a negative value (Off)
	// renders without noise.
	Noise float64
	// Blur is the standard deviation in pixels of an optional Gaussian
	// lens blur applied to every frame before the noise; 0 means none.
	Blur float64
	// Background is the static texture behind the object. Its zero fields
	// select DefaultBackgroundMean, DefaultBackgroundContrast and
	// DefaultTextureScale.
	Background Texture
	// Surface is the object's own texture, which moves with it. Its zero
	// fields select the object's defaults: mean gray 0.15 for the block,
	// 0.1 for the cable, 0.3 for the beam and 0.2 for the mast; contrast
	// 0.06 for the beam and flat (Off) for the others; scale
	// DefaultTextureScale.
	Surface Texture
}

// Deg returns a pointer to v, for Structure.Direction literals:
// Structure{Direction: Deg(30)}.
func Deg(v float64) *float64 { return &v }

// WithDefaults returns a copy of s with every zero field that has a
// default replaced by it (Direction becomes non-nil).
func (s Structure) WithDefaults() Structure {
	if s.W == 0 {
		s.W = DefaultStructureW
	}
	if s.H == 0 {
		s.H = DefaultStructureH
	}
	if s.FPS == 0 {
		s.FPS = DefaultStructureFPS
	}
	if s.Object == "" {
		s.Object = ObjectBlock
	}
	if s.Excitation == "" {
		s.Excitation = ExcitationFree
	}
	if s.Size == 0 {
		switch s.Object {
		case ObjectBlock:
			s.Size = math.Round(float64(min(s.W, s.H)) / 5)
		case ObjectCable:
			s.Size = 3
		case ObjectMast:
			s.Size = math.Min(8, math.Floor(float64(min(s.W, s.H))/4))
		}
	}
	if s.Direction == nil {
		s.Direction = Deg(s.Object.DefaultDirection())
	} else {
		s.Direction = Deg(*s.Direction)
	}
	if s.Noise == 0 {
		s.Noise = DefaultNoise
	}
	s.Modes = append([]Mode(nil), s.Modes...)
	// Copies, so that the result shares nothing with s.
	if s.Forcing != nil {
		f := *s.Forcing
		s.Forcing = &f
	}
	if s.Coloured != nil {
		c := *s.Coloured
		s.Coloured = &c
	}
	if s.Impulses != nil {
		im := *s.Impulses
		s.Impulses = &im
	}
	if s.Background.Mean == 0 {
		s.Background.Mean = DefaultBackgroundMean
	}
	if s.Background.Contrast == 0 {
		s.Background.Contrast = DefaultBackgroundContrast
	}
	if s.Background.Scale == 0 {
		s.Background.Scale = DefaultTextureScale
	}
	if s.Surface.Mean == 0 {
		s.Surface.Mean = map[ObjectKind]float64{ObjectBlock: 0.15, ObjectCable: 0.1, ObjectBeam: 0.3, ObjectMast: 0.2}[s.Object]
	}
	if s.Surface.Contrast == 0 {
		s.Surface.Contrast = Off
		if s.Object == ObjectBeam {
			s.Surface.Contrast = 0.06
		}
	}
	if s.Surface.Scale == 0 {
		s.Surface.Scale = DefaultTextureScale
	}
	return s
}

// Frames returns the number of frames round(Duration·FPS) after defaults,
// or 0 if that is not a finite non-negative number below 2³¹.
func (s Structure) Frames() int {
	fps := s.FPS
	if fps == 0 {
		fps = DefaultStructureFPS
	}
	n := math.Round(s.Duration * fps)
	if math.IsNaN(n) || n < 0 || n > math.MaxInt32 {
		return 0
	}
	return int(n)
}

// Times returns the frame times t_k = k/FPS, k = 0..Frames()−1.
func (s Structure) Times() []float64 {
	fps := s.WithDefaults().FPS
	t := make([]float64, s.Frames())
	for k := range t {
		t[k] = float64(k) / fps
	}
	return t
}

// Displacement returns the true displacement d(t) in pixels along the
// direction of motion at each time (for the mast, of its tip). For the
// free excitation it is the sum of the modes' free decays,
//
//	d(t) = Σ_m A_m·e^{−ζ_m ω_m t}·cos(ω_{d,m} t + φ_m),
//
// for the ambient one the sum of the modes' stationary random responses
// (ExcitationAmbient); to either it adds the modes' responses to the
// knocks of Impulses at KnockTimes, the Forcing's cosine and the
// Coloured noise. The random parts are one path, drawn from Seed,
// sampled exactly at the times t, which must then be ascending: the same
// t give the same values, and Times() gives the clip's. It returns nil
// for an unknown Excitation (Validate reports it).
func (s Structure) Displacement(t []float64) []float64 {
	d := make([]float64, len(t))
	switch s.Excitation {
	case "", ExcitationFree:
		for _, m := range s.Modes {
			for k, tk := range t {
				d[k] += m.At(tk)
			}
		}
	case ExcitationAmbient:
		for i := range s.Modes {
			for k, x := range s.ambientMode(t, i) {
				d[k] += x
			}
		}
	default:
		return nil
	}
	if s.Impulses != nil {
		s.addKnocks(d, t, s.KnockTimes())
	}
	if s.Forcing != nil {
		s.addForcing(d, t)
	}
	if s.Coloured != nil {
		s.addColoured(d, t)
	}
	return d
}

// StructureError is the error type of Structure.Validate: it names the
// offending field and unwraps to ErrInvalidScene.
type StructureError struct {
	// Field is the Structure field at fault, e.g. "FPS" or
	// "Modes[1].Zeta".
	Field string
	// Msg describes the problem, e.g. "is 1.2, want 0 ≤ ζ < 1".
	Msg string
}

// Error formats the error as "sim: invalid scene: Structure.Field Msg".
func (e *StructureError) Error() string {
	return fmt.Sprintf("sim: %v: Structure.%s %s", ErrInvalidScene, e.Field, e.Msg)
}

// Unwrap returns ErrInvalidScene.
func (e *StructureError) Unwrap() error { return ErrInvalidScene }

func structErr(field, format string, args ...any) error {
	return &StructureError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Limits enforced by Structure.Validate beyond the Scene limits (MinSize,
// MaxSize, MinFrames, MaxClipPixels), which apply to W and H as well.
const (
	// MaxNoise bounds Structure.Noise.
	MaxNoise = 0.5
	// MaxBlur bounds Structure.Blur (pixels).
	MaxBlur = 10
	// MaxTextureContrast bounds a Texture's Contrast.
	MaxTextureContrast = 0.5
	// MaxStreamFrames bounds the frames of a clip WriteStructureVideo
	// streams (it holds only the displacement, 8 bytes a frame, in
	// place of RenderStructure's MaxClipPixels bytes of frames): 2²⁴
	// frames, 6.5 days at 30 fps.
	MaxStreamFrames = 1 << 24
)

// Validate checks the structure and returns a *StructureError (which
// wraps ErrInvalidScene) naming the offending field when: W or H is
// outside MinSize..MaxSize (0 selects the default); FPS is negative, NaN
// or infinite; the clip would have fewer than MinFrames frames or more
// than MaxClipPixels pixels; Object, Excitation is unknown; Size is
// negative, not 0 for the beam, or out of the object's range (block
// 4..min(W,H)/2, cable 0.5..min(W,H)/4, mast 1..min(W,H)/4); Direction is
// not finite; a mode's Fn is not in (0, FPS/2), its Zeta not in [0, 1)
// (with ExcitationAmbient (0, 1)), or its AmplitudePx or Phase not finite
// (with ExcitationAmbient AmplitudePx ≥ 0); the modes' amplitudes sum to
// more than min(W,H)/4 pixels; Noise exceeds MaxNoise; Blur is outside
// 0..MaxBlur; a texture's Mean is outside [0, 1], its Contrast above
// MaxTextureContrast, or its Scale neither 0 nor 1..max(W,H); a field of
// Forcing, Coloured or Impulses is not finite, Forcing.Hz or
// Coloured.CornerHz is not in (0, FPS/2), Impulses.PerMinute not in
// 0..60·FPS, an amplitude is negative, or the modes' amplitudes plus
// Forcing.AmplitudePx, Coloured.RMSPx and Impulses.AmplitudePx exceed
// min(W,H)/4 pixels.
func (s Structure) Validate() error { return s.validate(false) }

// validate is Validate; with stream the clip's length is bounded by
// MaxStreamFrames instead of MaxClipPixels.
func (s Structure) validate(stream bool) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"FPS", s.FPS}, {"Duration", s.Duration}, {"Size", s.Size}, {"Noise", s.Noise}, {"Blur", s.Blur},
		{"Background.Mean", s.Background.Mean}, {"Background.Contrast", s.Background.Contrast}, {"Background.Scale", s.Background.Scale},
		{"Surface.Mean", s.Surface.Mean}, {"Surface.Contrast", s.Surface.Contrast}, {"Surface.Scale", s.Surface.Scale}} {
		if !finite(f.v) {
			return structErr(f.name, "is %v, want a finite number", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
		def  int
	}{{"W", s.W, DefaultStructureW}, {"H", s.H, DefaultStructureH}} {
		if f.v != 0 && (f.v < MinSize || f.v > MaxSize) {
			return structErr(f.name, "is %d, want %d..%d (or 0 for the default %d)", f.v, MinSize, MaxSize, f.def)
		}
	}
	if s.FPS < 0 {
		return structErr("FPS", "is %v, want > 0 (or 0 for the default %v)", s.FPS, DefaultStructureFPS)
	}
	if s.Object != "" && !s.Object.Valid() {
		return structErr("Object", "is %q, want %q, %q, %q or %q", s.Object, ObjectBlock, ObjectCable, ObjectBeam, ObjectMast)
	}
	if s.Excitation != "" && s.Excitation != ExcitationFree && s.Excitation != ExcitationAmbient {
		return structErr("Excitation", "is %q, want %q or %q", s.Excitation, ExcitationFree, ExcitationAmbient)
	}
	if s.Direction != nil && !finite(*s.Direction) {
		return structErr("Direction", "is %v, want a finite angle in degrees (or nil for the object's default)", *s.Direction)
	}
	d := s.WithDefaults()
	short := float64(min(d.W, d.H))
	nf := math.Round(d.Duration * d.FPS)
	if nf < MinFrames {
		return structErr("Duration", "is %v s, which gives %v frames at %v fps, want at least %d frames", s.Duration, nf, d.FPS, MinFrames)
	}
	if stream && nf > MaxStreamFrames {
		return structErr("Duration", "is %v s, which gives %v frames at %v fps, more than %d", s.Duration, nf, d.FPS, MaxStreamFrames)
	}
	if px := nf * float64(d.W) * float64(d.H); !stream && px > MaxClipPixels {
		return structErr("Duration", "is %v s, which gives %v frames of %d×%d px, more than %d pixels in total", s.Duration, nf, d.W, d.H, MaxClipPixels)
	}
	if s.Size < 0 {
		return structErr("Size", "is %v, want > 0 (or 0 for the object's default)", s.Size)
	}
	lo, hi := 0.0, 0.0
	switch d.Object {
	case ObjectBeam:
		if s.Size != 0 {
			return structErr("Size", "is %v, want 0: a beam's edge has no size", s.Size)
		}
	case ObjectBlock:
		lo, hi = 4, short/2
	case ObjectCable:
		lo, hi = 0.5, short/4
	case ObjectMast:
		lo, hi = 1, short/4
	}
	if d.Object != ObjectBeam && (d.Size < lo || d.Size > hi) {
		return structErr("Size", "is %v px, want %v..%v px for a %s in %d×%d frames", d.Size, lo, hi, d.Object, d.W, d.H)
	}
	sumA := 0.0
	for i, m := range s.Modes {
		f := func(name string) string { return fmt.Sprintf("Modes[%d].%s", i, name) }
		for _, v := range []struct {
			name string
			v    float64
		}{{"Fn", m.Fn}, {"Zeta", m.Zeta}, {"AmplitudePx", m.AmplitudePx}, {"Phase", m.Phase}} {
			if !finite(v.v) {
				return structErr(f(v.name), "is %v, want a finite number", v.v)
			}
		}
		if !(m.Fn > 0) || m.Fn >= d.FPS/2 {
			return structErr(f("Fn"), "is %v Hz, want 0 < Fn < FPS/2 = %v Hz (the Nyquist frequency)", m.Fn, d.FPS/2)
		}
		if m.Zeta < 0 || m.Zeta >= 1 {
			return structErr(f("Zeta"), "is %v, want 0 ≤ ζ < 1 (an underdamped mode)", m.Zeta)
		}
		sumA += math.Abs(m.AmplitudePx)
	}
	if sumA > short/4 {
		return structErr("Modes", "amplitudes sum to %v px, want at most min(W,H)/4 = %v px", sumA, short/4)
	}
	if err := s.validateExcitation(d, sumA); err != nil {
		return err
	}
	if s.Noise > MaxNoise {
		return structErr("Noise", "is %v, want at most %v of full scale (negative for none, 0 for the default %v)", s.Noise, MaxNoise, DefaultNoise)
	}
	if s.Blur < 0 || s.Blur > MaxBlur {
		return structErr("Blur", "is %v px, want 0..%v", s.Blur, MaxBlur)
	}
	for _, t := range []struct {
		name string
		t    Texture
	}{{"Background", s.Background}, {"Surface", s.Surface}} {
		if t.t.Mean < 0 || t.t.Mean > 1 {
			return structErr(t.name+".Mean", "is %v, want 0..1 (0 for the default)", t.t.Mean)
		}
		if t.t.Contrast > MaxTextureContrast {
			return structErr(t.name+".Contrast", "is %v, want at most %v (negative for a flat surface)", t.t.Contrast, MaxTextureContrast)
		}
		if t.t.Scale != 0 && (t.t.Scale < 1 || t.t.Scale > float64(max(d.W, d.H))) {
			return structErr(t.name+".Scale", "is %v px, want 1..%d (or 0 for the default %v)", t.t.Scale, max(d.W, d.H), DefaultTextureScale)
		}
	}
	return nil
}

// ModeTruth is the ground truth of one mode, as written next to a
// rendered clip.
type ModeTruth struct {
	Mode
	// Gamma0 and Gamma1 are γ0 = ω² and γ1 = 2ζω of the mode's ODE.
	Gamma0 float64 `json:"gamma0"`
	Gamma1 float64 `json:"gamma1"`
	// DampedHz is f_d = Fn·√(1 − ζ²).
	DampedHz float64 `json:"fd_hz"`
}

// StructureTruth is the ground truth of a Structure clip (after defaults)
// in a form meant for JSON.
type StructureTruth struct {
	// Object is the structure shown.
	Object ObjectKind `json:"object"`
	// W and H are the frame size in pixels.
	W int `json:"width"`
	H int `json:"height"`
	// FPS is the frame rate and Frames the number of frames.
	FPS    float64 `json:"fps"`
	Frames int     `json:"frames"`
	// Duration is the requested clip length in seconds.
	Duration float64 `json:"duration_s"`
	// DirectionDeg is the direction of motion in degrees (0 right, 90
	// down).
	DirectionDeg float64 `json:"direction_deg"`
	// SizePx is the object's size in pixels (0 for the beam).
	SizePx float64 `json:"size_px,omitempty"`
	// Noise is the pixel noise's standard deviation, fraction of full
	// scale (0: none).
	Noise float64 `json:"noise"`
	// Blur is the lens blur's standard deviation in pixels (0: none).
	Blur float64 `json:"blur_px,omitempty"`
	// Seed is the seed of the textures and the noise.
	Seed int64 `json:"seed"`
	// Excitation is how the modes are driven (with ExcitationAmbient a
	// mode's amplitude_px is its stationary RMS).
	Excitation Excitation `json:"excitation"`
	// Forcing, Coloured and Impulses are the excitation's other parts, if
	// any; Impulses holds the knocks drawn.
	Forcing  *Harmonic      `json:"forcing,omitempty"`
	Coloured *ColouredNoise `json:"coloured,omitempty"`
	Impulses *ImpulsesTruth `json:"impulses,omitempty"`
	// Background and Surface are the textures (contrast 0: flat).
	Background Texture `json:"background"`
	Surface    Texture `json:"surface"`
	// Modes holds each mode with its γ0, γ1 and damped frequency.
	Modes []ModeTruth `json:"modes"`
	// Gamma0 and Gamma1 repeat the single mode's γ0 and γ1; they are nil
	// unless the structure has exactly one mode.
	Gamma0 *float64 `json:"gamma0,omitempty"`
	Gamma1 *float64 `json:"gamma1,omitempty"`
}

// Truth returns the ground truth of s (after defaults). Noise is reported
// as 0 when off and texture contrasts as 0 when flat.
func (s Structure) Truth() StructureTruth {
	d := s.WithDefaults()
	t := StructureTruth{Object: d.Object, W: d.W, H: d.H, FPS: d.FPS, Frames: d.Frames(), Duration: d.Duration,
		DirectionDeg: *d.Direction, SizePx: d.Size, Noise: math.Max(d.Noise, 0), Blur: d.Blur, Seed: d.Seed,
		Excitation: d.Excitation, Background: d.Background, Surface: d.Surface, Modes: []ModeTruth{}}
	t.Forcing, t.Coloured = d.Forcing, d.Coloured
	if d.Impulses != nil {
		t.Impulses = &ImpulsesTruth{Impulses: *d.Impulses, KnockTimes: d.KnockTimes()}
	}
	t.Background.Contrast = math.Max(t.Background.Contrast, 0)
	t.Surface.Contrast = math.Max(t.Surface.Contrast, 0)
	for _, m := range d.Modes {
		g1, g0 := m.Gammas()
		t.Modes = append(t.Modes, ModeTruth{Mode: m, Gamma0: g0, Gamma1: g1, DampedHz: m.DampedHz()})
	}
	if len(t.Modes) == 1 {
		t.Gamma0, t.Gamma1 = &t.Modes[0].Gamma0, &t.Modes[0].Gamma1
	}
	return t
}

// Streams of a Structure's random draws: the textures hash the seed
// with their stream, the noise seeds one PCG per frame from it.
const (
	streamBackground = 0x6267746578 // "bgtex"
	streamSurface    = 0x7375726678 // "surfx"
	streamNoise      = 0x6e6f697365 // "noise"
)

// RenderStructure renders the clip of s: Frames() gray W×H frames at
// t_k = k/FPS and the true displacement d_k = Displacement(t)_k in
// pixels. Frame k is
//
//	I_k(p) = q( B(p) + a_k(p)·(O(p − d_k·u) − B(p)) + σ·n_k(p) ),
//
// with B the static background, a_k the object's area coverage at its
// displaced position, O the object's surface texture (moving with it), u
// the unit direction of motion, n_k standard normal noise, σ = Noise and
// q the 8-bit quantisation q(v) = round(255·clamp(v, 0, 1)); with Blur the
// Gaussian is applied before the noise. Frames are rendered in parallel
// (GOMAXPROCS workers); the result depends only on s.
//
// It returns an error wrapping ErrInvalidScene if s is invalid, or the
// context's error if ctx is done first.
func RenderStructure(ctx context.Context, s Structure) (frames []*image.Gray, d []float64, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s = s.WithDefaults()
	d = s.Displacement(s.Times())
	r := newStructRender(s, d)
	frames = make([]*image.Gray, len(d))
	if err := r.renderFrames(ctx, d, 0, frames, r.scratch(len(d))); err != nil {
		return nil, nil, err
	}
	return frames, d, nil
}

// scratch returns the float buffers of min(GOMAXPROCS, n) render workers
// (at least one).
func (r *structRender) scratch(n int) [][2][]float64 {
	bufs := make([][2][]float64, max(1, min(runtime.GOMAXPROCS(0), n)))
	for i := range bufs {
		bufs[i] = [2][]float64{make([]float64, r.w*r.h), make([]float64, r.w*r.h)}
	}
	return bufs
}

// renderFrames renders frames first … first+len(out)−1 of displacement d
// into out in parallel, one worker per scratch buffer pair in bufs. Each
// frame depends only on its index, so any order gives the same frames.
func (r *structRender) renderFrames(ctx context.Context, d []float64, first int, out []*image.Gray, bufs [][2][]float64) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(bufs))
	for w := range bufs {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf, tmp := bufs[w][0], bufs[w][1]
			for {
				i := int(next.Add(1)) - 1
				if i >= len(out) {
					return
				}
				k := first + i
				if err := ctx.Err(); err != nil {
					errs[w] = fmt.Errorf("sim: rendering stopped at frame %d: %w", k, err)
					next.Store(int64(len(out)))
					return
				}
				r.frameFloat(buf, tmp, d[k])
				out[i] = r.quantize(buf, k)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// structRender holds what the frames of one Structure share.
type structRender struct {
	s      Structure // with defaults
	w, h   int
	ux, uy float64 // unit direction of motion
	cx, cy float64 // frame centre, continuous coordinates
	bg     []float64
	surf   *textureField
}

// newStructRender precomputes the background and the surface texture of a
// validated structure with defaults; d is the clip's displacement (it
// sizes the surface texture's margin).
func newStructRender(s Structure, d []float64) *structRender {
	sin, cos := math.Sincos(*s.Direction * math.Pi / 180)
	r := &structRender{s: s, w: s.W, h: s.H, ux: cos, uy: sin, cx: float64(s.W) / 2, cy: float64(s.H) / 2}
	// Exactly axis-aligned directions keep the edges on the pixel grid.
	if math.Abs(r.ux) < 1e-12 {
		r.ux = 0
	}
	if math.Abs(r.uy) < 1e-12 {
		r.uy = 0
	}
	bg := newTextureField(s.Seed, streamBackground, s.W, s.H, 2, s.Background)
	r.bg = make([]float64, s.W*s.H)
	bg.sample(r.bg, 0, 0)
	maxD := 0.0
	for _, v := range d {
		maxD = math.Max(maxD, math.Abs(v))
	}
	r.surf = newTextureField(s.Seed, streamSurface, s.W, s.H, int(math.Ceil(maxD))+3, s.Surface)
	return r
}

// frameFloat renders the noise-free frame for displacement d into buf
// (values in gray-level units of [0, 1], unclamped); tmp is scratch of the
// same size.
func (r *structRender) frameFloat(buf, tmp []float64, d float64) {
	copy(buf, r.bg)
	switch r.s.Object {
	case ObjectBlock:
		r.paintBlock(buf, d)
	case ObjectCable, ObjectBeam:
		r.paintBand(buf, d)
	case ObjectMast:
		r.paintMast(buf, d)
	}
	if r.s.Blur > 0 {
		gaussBlur(buf, tmp, r.w, r.h, r.s.Blur)
	}
}

// quantize adds frame k's noise to buf and returns the 8-bit image.
func (r *structRender) quantize(buf []float64, k int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, r.w, r.h))
	if sigma := r.s.Noise; sigma > 0 {
		// One PCG stream per frame, so frames can be rendered in any order.
		rng := rand.New(rand.NewPCG(uint64(r.s.Seed), streamNoise^(uint64(k)*0x9e3779b97f4a7c15)))
		for i, v := range buf {
			img.Pix[i] = quantize8(v + sigma*rng.NormFloat64())
		}
		return img
	}
	for i, v := range buf {
		img.Pix[i] = quantize8(v)
	}
	return img
}

// quantize8 is the 8-bit quantisation q(v) = ⌊255·clamp(v, 0, 1) + ½⌋
// (NaN becomes 0).
func quantize8(v float64) uint8 {
	if !(v > 0) {
		return 0
	}
	if v >= 1 {
		return 255
	}
	return uint8(v*255 + 0.5)
}

// composite blends the object's surface over pixel (i, j) with coverage a:
// v ← v + a·(O − v).
func (r *structRender) composite(buf []float64, i, j int, a, o float64) {
	p := &buf[j*r.w+i]
	*p += a * (o - *p)
}

// blockLineHalfWidth is half the width of the block's suspension line.
const blockLineHalfWidth = 0.75

// paintBlock draws the block displaced by d·u: its square has exact area
// coverage (the product of the pixel's overlaps with the square's x and
// y extents), and the suspension line, from above the frame to the middle
// of the square's top edge, the 8×8 sub-sampled coverage of its distance
// function, cut at the square's top edge so that the two never overlap
// and their coverages add.
func (r *structRender) paintBlock(buf []float64, d float64) {
	dx, dy := d*r.ux, d*r.uy
	half := r.s.Size / 2
	sq := rect{r.cx - half + dx, r.cy - half + dy, r.cx + half + dx, r.cy + half + dy}
	ax, ay := r.cx, -2.0 // line anchor, above the frame
	bx, by := r.cx+dx, sq.y0
	line := func(x, y float64) float64 {
		return math.Max(segmentDist(x, y, ax, ay, bx, by)-blockLineHalfWidth, y-sq.y0)
	}
	lb := rect{math.Min(ax, bx) - 2, 0, math.Max(ax, bx) + 2, sq.y0 + 1}
	box := rect{math.Min(sq.x0, lb.x0), 0, math.Max(sq.x1, lb.x1), sq.y1}
	x0, x1 := pixelRange(box.x0, box.x1, r.w)
	y0, y1 := pixelRange(box.y0, box.y1, r.h)
	ox, oy, wx, wy := shiftWeights(dx, dy)
	for j := y0; j < y1; j++ {
		oyl := overlap(float64(j), float64(j+1), sq.y0, sq.y1)
		for i := x0; i < x1; i++ {
			a := oyl * overlap(float64(i), float64(i+1), sq.x0, sq.x1)
			if float64(i+1) > lb.x0 && float64(i) < lb.x1 && float64(j) < lb.y1 {
				a += sdfCoverage8(line, i, j)
			}
			if a > 0 {
				r.composite(buf, i, j, math.Min(a, 1), r.surf.at(i, j, ox, oy, &wx, &wy))
			}
		}
	}
}

// paintBand draws the cable (the band |u·(p − c) − d| ≤ Size/2) or the
// beam (the half-plane u·(p − c) − d ≥ 0) with the exact area of each
// pixel inside, from halfPlaneArea.
func (r *structRender) paintBand(buf []float64, d float64) {
	ux, uy := r.ux, r.uy
	reach := (math.Abs(ux) + math.Abs(uy)) / 2 // farthest pixel corner along u
	hw := r.s.Size / 2
	beam := r.s.Object == ObjectBeam
	lo, hi := -hw-reach, hw+reach
	if beam {
		lo, hi = -reach, math.Inf(1)
	}
	ox, oy, wx, wy := shiftWeights(d*ux, d*uy)
	for j := 0; j < r.h; j++ {
		// e(i) = u·((i, j) − c) − d is the signed distance of the pixel's
		// corner; a point q of the unit square lies at e + u·q, and the
		// centre at sc = e + (u_x + u_y)/2, so the square spans
		// sc ± reach.
		e0 := uy*(float64(j)-r.cy) - ux*r.cx - d
		i0, i1 := rowSpan(e0+(ux+uy)/2, ux, lo, hi, r.w)
		for i := i0; i < i1; i++ {
			e := e0 + ux*float64(i)
			sc := e + (ux+uy)/2
			var a float64
			switch {
			case beam && sc >= reach:
				a = 1
			case beam:
				a = 1 - halfPlaneArea(ux, uy, -e)
			default:
				a = halfPlaneArea(ux, uy, hw-e) - halfPlaneArea(ux, uy, -hw-e)
			}
			if a > 0 {
				r.composite(buf, i, j, a, r.surf.at(i, j, ox, oy, &wx, &wy))
			}
		}
	}
}

// rowSpan returns a range [i0, i1) ⊂ [0, w) of pixel columns holding every
// i with lo < c0 + slope·i < hi (with a pixel to spare on each side).
func rowSpan(c0, slope, lo, hi float64, w int) (i0, i1 int) {
	if slope == 0 {
		if lo < c0 && c0 < hi {
			return 0, w
		}
		return 0, 0
	}
	a, b := (lo-c0)/slope, (hi-c0)/slope
	if a > b {
		a, b = b, a
	}
	a = math.Max(math.Floor(a)-1, 0)
	b = math.Min(math.Ceil(b)+1, float64(w))
	if !(a < b) {
		return 0, 0
	}
	return int(a), int(b)
}

// mastShape is the cantilever deflection shape φ(ξ) = ξ²(3 − ξ)/2 of the
// mast at a fraction ξ of its length from the clamped base: φ(0) = 0,
// φ′(0) = 0, φ(1) = 1.
func mastShape(xi float64) float64 { return xi * xi * (3 - xi) / 2 }

// paintMast draws the bending mast with tip displacement d. In the frame
// (s, r) = (u·(p − c), v·(p − c)), v = (−u_y, u_x) pointing to the base,
// the mast is |s − d·φ(ξ)| ≤ Size/2 for r_tip ≤ r, with ξ = (r_base −
// r)/(r_base − r_tip); its coverage is sub-sampled 8×8 and its surface
// sampled at the pixel's own displacement.
func (r *structRender) paintMast(buf []float64, d float64) {
	ux, uy := r.ux, r.uy
	vx, vy := -uy, ux
	ext := (math.Abs(vx)*float64(r.w) + math.Abs(vy)*float64(r.h)) / 2
	rBase, rTip := ext+2, -0.6*ext
	L := rBase - rTip
	hw := r.s.Size / 2
	sdf := func(x, y float64) float64 {
		px, py := x-r.cx, y-r.cy
		s, rr := ux*px+uy*py, vx*px+vy*py
		xi := clamp01((rBase - rr) / L)
		return max(math.Abs(s-d*mastShape(xi))-hw, rTip-rr)
	}
	// The mast lies within |s| ≤ hw + |d| and r_tip ≤ r ≤ r_base: scan the
	// pixel box around those four corners only.
	m := hw + math.Abs(d) + 1
	bx0, by0, bx1, by1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [4][2]float64{{-m, rTip - 1}, {m, rTip - 1}, {-m, rBase}, {m, rBase}} {
		x, y := r.cx+c[0]*ux+c[1]*vx, r.cy+c[0]*uy+c[1]*vy
		bx0, by0, bx1, by1 = math.Min(bx0, x), math.Min(by0, y), math.Max(bx1, x), math.Max(by1, y)
	}
	x0, x1 := pixelRange(bx0, bx1, r.w)
	y0, y1 := pixelRange(by0, by1, r.h)
	for j := y0; j < y1; j++ {
		for i := x0; i < x1; i++ {
			a := sdfCoverage8(sdf, i, j)
			if a <= 0 {
				continue
			}
			rr := vx*(float64(i)+0.5-r.cx) + vy*(float64(j)+0.5-r.cy)
			di := d * mastShape(clamp01((rBase-rr)/L))
			r.composite(buf, i, j, a, r.surf.atPoint(float64(i)-di*ux, float64(j)-di*uy))
		}
	}
}
