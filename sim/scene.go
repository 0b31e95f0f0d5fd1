package sim

import (
	"errors"
	"fmt"
	"math"
)

// System names the simulated object whose state z(t) is observed.
type System string

// The three simulated systems of the paper.
const (
	// SystemPendulum is a rod and bob swinging about the frame centre; the
	// state is the angle in degrees (0 = hanging straight down, positive =
	// bob to the right).
	SystemPendulum System = "pendulum"
	// SystemIntensity is a static irregular polygon whose uniform gray level
	// is an affine function of the state.
	SystemIntensity System = "intensity"
	// SystemScale is an "asymmetric circle" whose left half-disc grows while
	// its right half-disc shrinks, affinely in the state.
	SystemScale System = "scale"
)

// Valid reports whether s is one of the known systems.
func (s System) Valid() bool {
	switch s {
	case SystemPendulum, SystemIntensity, SystemScale:
		return true
	}
	return false
}

// DefaultFPS returns the paper's frame rate for a system: 20 frames per
// second for the pendulum and 10 for the intensity and scale systems. It
// returns 0 for an unknown system.
func DefaultFPS(s System) float64 {
	switch s {
	case SystemPendulum:
		return 20
	case SystemIntensity, SystemScale:
		return 10
	}
	return 0
}

// DefaultSize is the frame side in pixels used when Scene.Size is 0.
const DefaultSize = 64

// Limits enforced by Scene.Validate.
const (
	// MinSize and MaxSize bound Scene.Size (pixels per side).
	MinSize, MaxSize = 16, 4096
	// MinFrames is the shortest clip Render accepts.
	MinFrames = 3
	// MaxClipPixels bounds frames·Size² of one clip (1 GiB of 8-bit frames)
	// so that an absurd Duration fails cleanly instead of exhausting memory.
	MaxClipPixels = 1 << 30
)

// NuisanceKind names a disturbance added to the rendered frames.
type NuisanceKind string

// The nuisance kinds of the paper's pendulum stress test. They apply to
// every system.
const (
	// NuisanceNone renders the clean scene.
	NuisanceNone NuisanceKind = ""
	// NuisanceBackground adds static distractor squares (8, 12 or 16 of
	// them for levels 1, 2, 3), never covering the frame centre.
	NuisanceBackground NuisanceKind = "background"
	// NuisanceClutter adds 4 moving squares: level 1 all on one shared
	// sinusoid, level 2 each on its own small sinusoid, level 3 each
	// bouncing around in a random direction.
	NuisanceClutter NuisanceKind = "clutter"
	// NuisanceJitter shifts the whole frame: level 1 a smooth vertical
	// oscillation, level 2 a 2-D random walk, level 3 a larger random walk
	// with sudden bursts.
	NuisanceJitter NuisanceKind = "jitter"
	// NuisanceBrightness multiplies the frame by a pseudo-3D lighting
	// pattern: level 1 one fixed light, level 2 one moving light of varying
	// strength, level 3 two such lights.
	NuisanceBrightness NuisanceKind = "brightness"
)

// Valid reports whether k is a known nuisance kind (including none).
func (k NuisanceKind) Valid() bool {
	switch k {
	case NuisanceNone, NuisanceBackground, NuisanceClutter, NuisanceJitter, NuisanceBrightness:
		return true
	}
	return false
}

// Nuisance selects a disturbance and its strength.
type Nuisance struct {
	// Kind is the disturbance; the empty kind means a clean scene.
	Kind NuisanceKind
	// Level is the strength, 1 (mild) to 3 (strong). It must be 0 when
	// Kind is empty.
	Level int
}

// Scene describes one synthetic clip. The zero values of FPS and Size mean
// "use the default" (DefaultFPS(System) and DefaultSize).
type Scene struct {
	// System is the simulated object.
	System System
	// Gamma1 and Gamma0 are the ODE coefficients γ1 (damping) and γ0
	// (stiffness) of z″ + γ1 z′ + γ0 z = 0.
	Gamma1, Gamma0 float64
	// Z0 and V0 are the initial state and velocity. For the pendulum they
	// are degrees and degrees per second (the paper's "(50,0)",
	// "(50,-200)"); for intensity and scale they are the raw state units of
	// the paper's tables (e.g. "(0.4; 0,-200,200)" is Z0 = 0.4 with V0 one
	// of 0, −200, 200).
	Z0, V0 float64
	// Duration is the clip length in seconds. The clip has
	// n = round(Duration·FPS) frames at times t_k = k/FPS, k = 0..n−1.
	Duration float64
	// FPS is the frame rate; 0 means DefaultFPS(System).
	FPS float64
	// Size is the side of the square frames in pixels; 0 means DefaultSize.
	Size int
	// Seed drives every random choice (polygon shape, nuisance placement
	// and motion). The same seed gives identical frames.
	Seed int64
	// Nuisance is the optional disturbance.
	Nuisance Nuisance
}

// withDefaults returns s with zero FPS and Size replaced by their defaults.
func (s Scene) withDefaults() Scene {
	if s.FPS == 0 {
		s.FPS = DefaultFPS(s.System)
	}
	if s.Size == 0 {
		s.Size = DefaultSize
	}
	return s
}

// WithDefaults returns a copy of s in which a zero FPS is replaced by
// DefaultFPS(s.System) and a zero Size by DefaultSize.
func (s Scene) WithDefaults() Scene { return s.withDefaults() }

// Frames returns the number of frames round(Duration·FPS) of the clip after
// defaults are applied, or 0 if that is not a finite non-negative number
// below 2³¹.
func (s Scene) Frames() int {
	s = s.withDefaults()
	n := math.Round(s.Duration * s.FPS)
	if math.IsNaN(n) || n < 0 || n > math.MaxInt32 {
		return 0
	}
	return int(n)
}

// Times returns the frame times t_k = k/FPS, k = 0..Frames()−1.
func (s Scene) Times() []float64 {
	s = s.withDefaults()
	n := s.Frames()
	t := make([]float64, n)
	for k := range t {
		t[k] = float64(k) / s.FPS
	}
	return t
}

// ErrInvalidScene is wrapped by every error returned by Scene.Validate
// (and by the validation errors of Render and RenderSet).
var ErrInvalidScene = errors.New("invalid scene")

// SceneError is the error type of Scene.Validate: it names the offending
// field and unwraps to ErrInvalidScene.
type SceneError struct {
	// Index is the position of the scene in the slice given to RenderSet,
	// or −1 for a single scene.
	Index int
	// Field is the Scene field at fault, e.g. "FPS" or "Nuisance.Level".
	Field string
	// Msg describes the problem, e.g. "is -2, want > 0".
	Msg string
}

// Error formats the error as "sim: [scenes[i]: ]invalid scene: Scene.Field Msg".
func (e *SceneError) Error() string {
	at := ""
	if e.Index >= 0 {
		at = fmt.Sprintf("scenes[%d]: ", e.Index)
	}
	return fmt.Sprintf("sim: %s%v: Scene.%s %s", at, ErrInvalidScene, e.Field, e.Msg)
}

// Unwrap returns ErrInvalidScene.
func (e *SceneError) Unwrap() error { return ErrInvalidScene }

func fieldErr(field, format string, args ...any) error {
	return &SceneError{Index: -1, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Validate checks the scene (after defaults are applied) and returns a
// *SceneError (which wraps ErrInvalidScene) naming the offending field when:
// System or Nuisance.Kind is unknown; Nuisance.Level is outside 1..3 (or
// not 0 for a clean scene); Gamma1, Gamma0, Z0, V0, Duration or FPS is NaN
// or infinite; FPS is negative (0 selects the default); Size is outside
// MinSize..MaxSize (0 selects the default); the clip would have fewer than
// MinFrames frames; or frames·Size² exceeds MaxClipPixels.
func (s Scene) Validate() error {
	if !s.System.Valid() {
		return fieldErr("System", "is %q, want %q, %q or %q", s.System, SystemPendulum, SystemIntensity, SystemScale)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Gamma1", s.Gamma1}, {"Gamma0", s.Gamma0}, {"Z0", s.Z0}, {"V0", s.V0}, {"Duration", s.Duration}, {"FPS", s.FPS}} {
		if !finite(f.v) {
			return fieldErr(f.name, "is %v, want a finite number", f.v)
		}
	}
	if s.FPS < 0 {
		return fieldErr("FPS", "is %v, want > 0 (or 0 for the default %v)", s.FPS, DefaultFPS(s.System))
	}
	if s.Size != 0 && (s.Size < MinSize || s.Size > MaxSize) {
		return fieldErr("Size", "is %d, want %d..%d (or 0 for the default %d)", s.Size, MinSize, MaxSize, DefaultSize)
	}
	if !s.Nuisance.Kind.Valid() {
		return fieldErr("Nuisance.Kind", "is %q, want \"\", %q, %q, %q or %q", s.Nuisance.Kind,
			NuisanceBackground, NuisanceClutter, NuisanceJitter, NuisanceBrightness)
	}
	if s.Nuisance.Kind == NuisanceNone {
		if s.Nuisance.Level != 0 {
			return fieldErr("Nuisance.Level", "is %d but Nuisance.Kind is empty, want 0", s.Nuisance.Level)
		}
	} else if s.Nuisance.Level < 1 || s.Nuisance.Level > 3 {
		return fieldErr("Nuisance.Level", "is %d, want 1..3", s.Nuisance.Level)
	}
	d := s.withDefaults()
	nf := math.Round(d.Duration * d.FPS)
	if nf < MinFrames {
		return fieldErr("Duration", "is %v s, which gives %v frames at %v fps, want at least %d frames", s.Duration, nf, d.FPS, MinFrames)
	}
	if px := nf * float64(d.Size) * float64(d.Size); px > MaxClipPixels {
		return fieldErr("Duration", "is %v s, which gives %v frames of %d×%d px, more than %d pixels in total", s.Duration, nf, d.Size, d.Size, MaxClipPixels)
	}
	return nil
}
