package estimator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// The estimator's entry points are Fit (physd estimate, and a lone event in
// the daemon) and Learner.Window (every other daemon window). Degenerate
// windows must come back as errors wrapping these sentinels:
//
//   - ErrNoClips: a window with no clip;
//   - ErrInvalidClip: a clip Fit cannot read (frame size not positive or
//     differing between clips, time step not positive and finite or
//     differing, a frame of the wrong length, a NaN or infinite pixel),
//     with ErrTooFewFrames when it has fewer than MinFrames frames;
//   - ErrNoMotion: frames that do not change;
//   - ErrDegenerate, ErrNotFinite, ErrDiverged, ErrNoContinuousModel:
//     valid frames whose latent determines no (γ1, γ0).

// fuzzPreset is the default preset at 8×8 with a few steps, so that one
// fit takes about a millisecond; cnn selects a tiny CNN instead.
func fuzzPreset(tb testing.TB, steps int, cnn bool) estimator.Preset {
	tb.Helper()
	name := estimator.DefaultPreset
	if cnn {
		name = "paper"
	}
	p, err := estimator.LookupPreset(name)
	if err != nil {
		tb.Fatal(err)
	}
	p.Size, p.Steps = 8, steps
	if cnn {
		p.CNNWidths, p.CNNHidden = []int{2, 2}, 2
	}
	return p
}

// oscillation is a clip of n w×h frames of a blob swinging horizontally
// with frequency freq (rad per frame) and damping per frame: a window the
// estimator should handle.
func oscillation(w, h, n int, dt, freq, damp, amp float64) estimator.Clip {
	c := estimator.Clip{W: w, H: h, Dt: dt}
	for k := range n {
		cx := (float64(w)-1)/2 + amp*float64(w)/2*math.Cos(freq*float64(k))*math.Exp(-damp*float64(k))
		cy := (float64(h) - 1) / 2
		px := make([]float64, w*h)
		for y := range h {
			for x := range w {
				dx, dy := float64(x)-cx, float64(y)-cy
				px[y*w+x] = math.Exp(-(dx*dx + dy*dy) / 3)
			}
		}
		c.Frames = append(c.Frames, px)
	}
	return c
}

// constant is a clip of n identical frames of the given level.
func constant(w, h, n int, dt, level float64) estimator.Clip {
	c := estimator.Clip{W: w, H: h, Dt: dt}
	for range n {
		px := make([]float64, w*h)
		for i := range px {
			px[i] = level
		}
		c.Frames = append(c.Frames, px)
	}
	return c
}

// warmLearner is a checkpoint of a learner that has estimated one 8×8
// oscillation, so that a fuzzed window meets a warm encoder as in the
// daemon.
func warmLearner(tb testing.TB, p estimator.Preset) []byte {
	tb.Helper()
	l, err := estimator.NewLearner(estimator.LearnerOptions{Preset: p, Steps: 2, Replay: 1, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := l.Window(context.Background(), []estimator.Clip{oscillation(8, 8, 40, 0.05, 0.4, 0.02, 0.6)}, certified); err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	if err := l.Save(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// certified is the daemon's accept function, with default thresholds.
func certified(r *estimator.Result) bool {
	return window.Certify(r, window.Thresholds{}, nil).Certified
}

// fuzzReader hands out the bytes of a fuzzed window description, then
// zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

// fuzzSides are the frame sides a window description picks from: mostly
// the preset's 8, and the degenerate ones.
var fuzzSides = []int{8, 8, 8, 8, 1, 2, 3, 4, 5, 7, 9, 16, 0, -1}

// buildWindow turns a description into clips, and says which sentinel
// validation must return (nil: the clips are valid) and whether the
// window shows no motion (no clip has two different frames).
func buildWindow(dt float64, spec []byte) (clips []estimator.Clip, invalid error, still bool) {
	r := &fuzzReader{spec}
	nclips := r.next() % 5
	if nclips == 0 {
		return nil, estimator.ErrNoClips, false
	}
	for range nclips {
		w, h := fuzzSides[r.next()%len(fuzzSides)], fuzzSides[r.next()%len(fuzzSides)]
		n := r.next() % 49
		cdt := dt
		switch r.next() % 12 {
		case 8:
			cdt = 2 * dt
		case 9:
			cdt = -dt
		case 10:
			cdt = math.NaN()
		case 11:
			cdt = 0
		}
		var c estimator.Clip
		pw, ph := max(w, 0), max(h, 0)
		switch kind := r.next() % 6; kind {
		case 0, 1: // a damped oscillation
			c = oscillation(pw, ph, n, cdt, float64(r.next()+1)/128, float64(r.next())/1024, float64(r.next())/256)
		case 2: // one level throughout
			c = constant(pw, ph, n, cdt, float64(r.next())/255)
		case 3: // pixels from the description
			c = constant(pw, ph, n, cdt, 0)
			for _, f := range c.Frames {
				for i := range f {
					f[i] = float64(r.next()) / 255
				}
			}
		case 4: // uniform brightness flicker: no spatial change
			c = constant(pw, ph, n, cdt, 0)
			for k, f := range c.Frames {
				for i := range f {
					f[i] = float64(k%2) * 0.5
				}
			}
		case 5: // out-of-range levels
			c = oscillation(pw, ph, n, cdt, 0.3, 0.01, 0.5)
			scale := []float64{-1, 1e3, 1e-300, 1e300, math.MaxFloat64}[r.next()%5]
			for _, f := range c.Frames {
				for i := range f {
					f[i] *= scale
				}
			}
		}
		c.W, c.H = w, h
		// Damage one frame.
		k, i := r.next(), r.next()
		if n > 0 {
			f := &c.Frames[k%n]
			switch r.next() % 12 {
			case 6, 7, 8:
				if len(*f) > 0 {
					(*f)[i%len(*f)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.next()%3]
				}
			case 9:
				if len(*f) > 0 {
					*f = (*f)[:len(*f)-1]
				}
			case 10:
				*f = append(*f, 0.5)
			case 11:
				*f = nil
			}
		}
		clips = append(clips, c)
		if invalid == nil {
			invalid = clipProblem(c, clips[0])
		}
	}
	if invalid != nil {
		return clips, invalid, false
	}
	still = true
	for _, c := range clips {
		for _, f := range c.Frames {
			still = still && slices.Equal(f, c.Frames[0])
		}
	}
	return clips, nil, still
}

// clipProblem is the sentinel the documentation promises for clip c of a
// window whose first clip is c0, or nil.
func clipProblem(c, c0 estimator.Clip) error {
	switch {
	case c.W <= 0 || c.H <= 0 || c.W != c0.W || c.H != c0.H:
		return estimator.ErrInvalidClip
	case !(c.Dt > 0) || math.IsInf(c.Dt, 0) || !(c0.Dt > 0) || math.IsInf(c0.Dt, 0) || math.Abs(c.Dt-c0.Dt) > 1e-9*c0.Dt:
		return estimator.ErrInvalidClip
	case len(c.Frames) < estimator.MinFrames:
		return estimator.ErrTooFewFrames
	}
	for _, f := range c.Frames {
		if len(f) != c.W*c.H {
			return estimator.ErrInvalidClip
		}
		for _, v := range f {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return estimator.ErrInvalidClip
			}
		}
	}
	return nil
}

// FuzzFitWindow runs Fit, and Learner.Window with a cold and with a warm
// encoder, on fuzzed windows: any number of clips of any sizes, constant,
// flickering or out-of-range frames, NaN or infinite pixels, frames of the
// wrong length, bad time steps. It checks that nothing panics, that an
// invalid window is refused with ErrNoClips or ErrInvalidClip (and
// ErrTooFewFrames), a window without motion with ErrNoMotion, and that a
// result has finite numbers and is never certified for a window without
// motion. The committed corpus is in testdata/fuzz/FuzzFitWindow.
func FuzzFitWindow(f *testing.F) {
	lowrank := fuzzPreset(f, 2, false)
	warm := warmLearner(f, lowrank)
	// Seeds (dt, steps, entry point, cnn, description): the description is
	// the number of clips, then per clip: w and h (indices into
	// fuzzSides), frames, dt mode (8: doubled, 9: negative, 10: NaN, 11:
	// 0), kind (0, 1: oscillation with frequency, damping and amplitude;
	// 2: constant level; 3: pixels; 4: flicker; 5: scaled out of range),
	// the kind's parameters, then the damaged frame and pixel, the damage
	// (6–8: NaN, +Inf, −Inf; 9: short; 10: long; 11: nil) and its value.
	f.Add(0.05, 2, 0, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150})
	f.Add(0.05, 0, 0, false, []byte{3, 0, 0, 30, 0, 0, 50, 0, 150, 0, 0, 0, 0, 0, 30, 0, 0, 70, 10, 200, 0, 0, 0, 0, 0, 30, 0, 1, 30, 5, 100})
	f.Add(0.05, 2, 2, false, []byte{1, 0, 0, 20, 0, 2, 128})
	f.Add(0.05, 2, 1, false, []byte{1, 0, 0, 1, 0, 0, 50, 20, 150})
	f.Add(0.05, 2, 2, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150, 17, 3, 6, 0})
	f.Add(0.05, 2, 0, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150, 17, 3, 9})
	f.Add(0.0, 2, 1, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150})
	f.Add(math.NaN(), 2, 2, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150})
	f.Add(0.05, 1, 1, true, []byte{1, 0, 0, 24, 0, 0, 50, 20, 150})
	f.Add(0.05, 2, 2, false, []byte{1, 0, 0, 40, 0, 0, 50, 20, 150})
	f.Add(0.05, 2, 1, false, []byte{1, 0, 0, 40, 0, 4})
	f.Add(0.05, 2, 0, false, []byte{1, 0, 0, 40, 0, 5, 3})
	f.Add(0.05, 2, 0, false, []byte{2, 0, 0, 40, 0, 0, 50, 20, 150, 0, 0, 0, 4, 4, 40, 0, 0, 50, 20, 150})
	f.Add(0.05, 2, 0, false, []byte{2, 0, 0, 40, 0, 0, 50, 20, 150, 0, 0, 0, 0, 0, 40, 8, 0, 50, 20, 150})
	f.Add(0.05, 2, 1, false, []byte{1, 4, 11, 40, 0, 0, 50, 20, 150})
	f.Fuzz(func(t *testing.T, dt float64, steps, entry int, cnn bool, spec []byte) {
		clips, invalid, still := buildWindow(dt, spec)
		p := lowrank
		if cnn {
			p = fuzzPreset(t, int(uint(steps)%2), true)
		} else {
			p.Steps = int(uint(steps) % 4)
		}
		ctx := context.Background()
		if entry := uint(entry) % 3; entry == 0 {
			r, err := estimator.Fit(ctx, clips, estimator.Options{Preset: p, Seed: 1})
			checkWindow(t, "Fit", clips, invalid, still, r, err)
			return
		}
		// 1: a cold learner, then the same window again with the encoder
		// it made; 2: a learner whose encoder was trained on another
		// window (low-rank only: a CNN is not checkpointed).
		l, err := estimator.NewLearner(estimator.LearnerOptions{Preset: p, Steps: 2, Replay: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		windows := []string{"cold Window", "Window again"}
		if entry == 2 && !cnn {
			if err := l.Load(bytes.NewReader(warm)); err != nil {
				t.Fatal(err)
			}
			windows = []string{"warm Window"}
		}
		for _, what := range windows {
			o, err := l.Window(ctx, clips, certified)
			var r *estimator.Result
			if o != nil {
				r = o.Result
				if r == nil {
					t.Fatalf("%s: outcome without a result", what)
				}
			}
			checkWindow(t, what, clips, invalid, still, r, err)
		}
	})
}

// checkWindow asserts the contract of an entry point on one window.
func checkWindow(t *testing.T, what string, clips []estimator.Clip, invalid error, still bool, r *estimator.Result, err error) {
	t.Helper()
	if (r == nil) == (err == nil) {
		t.Fatalf("%s: result %v and error %v", what, r != nil, err)
	}
	switch {
	case invalid != nil:
		if !errors.Is(err, invalid) || (invalid == estimator.ErrTooFewFrames && !errors.Is(err, estimator.ErrInvalidClip)) {
			t.Fatalf("%s: invalid window (%v): got %v", what, invalid, err)
		}
		return
	case still:
		if !errors.Is(err, estimator.ErrNoMotion) {
			t.Fatalf("%s: window without motion: got %v", what, err)
		}
		return
	case err != nil:
		for _, s := range []error{estimator.ErrNoClips, estimator.ErrInvalidClip, estimator.ErrTooFewFrames} {
			if errors.Is(err, s) {
				t.Fatalf("%s: valid window refused as invalid: %v", what, err)
			}
		}
		return
	}
	if bad := nonFinite(r); bad != "" {
		t.Fatalf("%s: result with %s", what, bad)
	}
	if len(r.Latents) != len(clips) || len(r.Frames) != len(clips) {
		t.Fatalf("%s: %d latents and %d frame sets for %d clips", what, len(r.Latents), len(r.Frames), len(clips))
	}
	for m, c := range clips {
		if len(r.Latents[m]) != len(c.Frames) {
			t.Fatalf("%s: clip %d: %d latents for %d frames", what, m, len(r.Latents[m]), len(c.Frames))
		}
	}
	v := window.Certify(r, window.Thresholds{}, nil)
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("%s: verdict does not encode: %v", what, err)
	}
	if v.Certified && !(r.Gamma0 > 0 && !math.IsNaN(r.Zeta)) {
		t.Fatalf("%s: certified γ0 %v, ζ %v", what, r.Gamma0, r.Zeta)
	}
}

// nonFinite names the first number of r that is NaN or infinite, or
// returns "". ζ is NaN, by Derive's definition, when γ0 ≤ 0.
func nonFinite(r *estimator.Result) string {
	nums := map[string]float64{"γ1": r.Gamma1, "γ0": r.Gamma0, "σ1": r.Sigma1, "σ0": r.Sigma0, "loss": r.Loss, "dt": r.Dt,
		"ω_n": r.OmegaN, "f_n": r.FreqN, "f_d": r.FreqD, "σ_f": r.SigmaF, "σ_ζ": r.SigmaZ}
	if r.Gamma0 > 0 {
		nums["ζ"] = r.Zeta
	} else if !math.IsNaN(r.Zeta) || r.Regime != estimator.Unstable {
		return fmt.Sprintf("γ0 %v but ζ %v, regime %s", r.Gamma0, r.Zeta, r.Regime)
	}
	for i, row := range r.Cov {
		for j, v := range row {
			nums[fmt.Sprintf("cov[%d][%d]", i, j)] = v
		}
	}
	if s := r.Stencil; s == nil {
		return "no stencil fit"
	} else {
		nums["stencil γ1"], nums["stencil γ0"], nums["stencil g"], nums["RSS"], nums["signal"] = s.Gamma1, s.Gamma0, s.G, s.RSS, s.Signal
		for m, res := range s.Resid {
			for k, v := range res {
				nums[fmt.Sprintf("clip %d residual %d", m, k)] = v
			}
		}
	}
	if tf := r.Trajectory; tf != nil {
		nums["trajectory γ1"], nums["trajectory γ0"], nums["offset"], nums["trajectory RSS"], nums["trajectory signal"] =
			tf.Gamma1, tf.Gamma0, tf.Offset, tf.RSS, tf.Signal
		for m, x := range tf.X0 {
			nums[fmt.Sprintf("clip %d z0", m)], nums[fmt.Sprintf("clip %d z'0", m)] = x[0], x[1]
		}
	}
	for m, z := range r.Latents {
		for k, v := range z {
			nums[fmt.Sprintf("clip %d latent %d", m, k)] = v
		}
	}
	for name, v := range nums {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("%s = %v", name, v)
		}
	}
	return ""
}

// TestDegenerateWindows checks the error of each kind of degenerate window,
// from Fit and from a learner with a warm encoder.
func TestDegenerateWindows(t *testing.T) {
	p := fuzzPreset(t, 2, false)
	warm := warmLearner(t, p)
	good := func() estimator.Clip { return oscillation(8, 8, 40, 0.05, 0.4, 0.02, 0.6) }
	nanPixel := good()
	nanPixel.Frames[17][3] = math.NaN()
	infPixel := good()
	infPixel.Frames[0][63] = math.Inf(-1)
	short := good()
	short.Frames[2] = short.Frames[2][:63]
	single, two := good(), good()
	single.Frames, two.Frames = single.Frames[:1], two.Frames[:2]
	zeroSize := good()
	zeroSize.W, zeroSize.H, zeroSize.Frames = 0, 0, make([][]float64, 40)
	dt := func(v float64) estimator.Clip { c := good(); c.Dt = v; return c }
	small := oscillation(4, 4, 40, 0.05, 0.4, 0.02, 0.6)
	flicker := constant(8, 8, 40, 0.05, 0.5)
	for k, f := range flicker.Frames {
		for i := range f {
			f[i] = 0.2 + 0.1*float64(k%3)
		}
	}
	for _, tc := range []struct {
		name  string
		clips []estimator.Clip
		want  []error
		msg   string
		// warmMayEstimate: a warm learner may return an uncertified
		// estimate instead of the error.
		warmMayEstimate bool
	}{
		{"no clips", nil, []error{estimator.ErrNoClips}, "no clips", false},
		{"constant frames", []estimator.Clip{constant(8, 8, 40, 0.05, 0.5)}, []error{estimator.ErrNoMotion}, "no clip has two different frames", false},
		{"black frames", []estimator.Clip{constant(8, 8, 40, 0.05, 0)}, []error{estimator.ErrNoMotion}, "no clip has two different frames", false},
		{"clips each constant", []estimator.Clip{constant(8, 8, 40, 0.05, 0.2), constant(8, 8, 40, 0.05, 0.7)}, []error{estimator.ErrNoMotion}, "no clip has two different frames", false},
		// A warm encoder sees the brightness, not motion, and may return
		// an estimate of the flicker, which must not be certified.
		{"brightness flicker", []estimator.Clip{flicker}, []error{estimator.ErrNoMotion}, "only in overall brightness", true},
		{"single frame", []estimator.Clip{single}, []error{estimator.ErrTooFewFrames, estimator.ErrInvalidClip}, "clip 0: 1 frames, need at least 8", false},
		{"two frames", []estimator.Clip{two}, []error{estimator.ErrTooFewFrames, estimator.ErrInvalidClip}, "clip 0: 2 frames, need at least 8", false},
		{"second clip of two frames", []estimator.Clip{good(), two}, []error{estimator.ErrTooFewFrames}, "clip 1: 2 frames", false},
		{"NaN pixel", []estimator.Clip{good(), good(), nanPixel}, []error{estimator.ErrInvalidClip}, "clip 2 frame 17: pixel 3 is NaN", false},
		{"infinite pixel", []estimator.Clip{infPixel}, []error{estimator.ErrInvalidClip}, "clip 0 frame 0: pixel 63 is -Inf", false},
		{"short frame", []estimator.Clip{short}, []error{estimator.ErrInvalidClip}, "clip 0 frame 2: 63 pixels, want 8×8", false},
		{"zero-size frames", []estimator.Clip{zeroSize}, []error{estimator.ErrInvalidClip}, "clip 0: frame size 0×0", false},
		{"clips of different sizes", []estimator.Clip{good(), small}, []error{estimator.ErrInvalidClip}, "clip 1: frame size 4×4 differs", false},
		{"zero dt", []estimator.Clip{dt(0)}, []error{estimator.ErrInvalidClip}, "time step 0 s", false},
		{"negative dt", []estimator.Clip{dt(-0.05)}, []error{estimator.ErrInvalidClip}, "time step -0.05 s", false},
		{"NaN dt", []estimator.Clip{dt(math.NaN())}, []error{estimator.ErrInvalidClip}, "time step NaN s", false},
		{"infinite dt", []estimator.Clip{dt(math.Inf(1))}, []error{estimator.ErrInvalidClip}, "time step +Inf s", false},
		{"clips at different rates", []estimator.Clip{good(), dt(0.04)}, []error{estimator.ErrInvalidClip}, "clip 1: time step 0.04 s differs", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			check := func(what string, ok bool, err error) {
				t.Helper()
				if ok || err == nil {
					t.Fatalf("%s: no error", what)
				}
				for _, s := range tc.want {
					if !errors.Is(err, s) {
						t.Errorf("%s: %v does not wrap %q", what, err, s)
					}
				}
				if !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("%s: %q does not say %q", what, err, tc.msg)
				}
			}
			r, err := estimator.Fit(ctx, tc.clips, estimator.Options{Preset: p, Seed: 1})
			check("Fit", r != nil, err)
			l, err := estimator.NewLearner(estimator.LearnerOptions{Preset: p, Steps: 2, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Load(bytes.NewReader(warm)); err != nil {
				t.Fatal(err)
			}
			o, err := l.Window(ctx, tc.clips, certified)
			if tc.warmMayEstimate && err == nil {
				if v := window.Certify(o.Result, window.Thresholds{}, nil); v.Certified {
					t.Fatalf("warm Window certified %+v", o.Result.Physics)
				}
				return
			}
			check("warm Window", o != nil, err)
		})
	}
}

// TestFitWindowSmoke checks that the fuzz preset estimates a clean
// oscillation, so that FuzzFitWindow also reaches the code after the
// validation.
func TestFitWindowSmoke(t *testing.T) {
	p := fuzzPreset(t, 2, false)
	clip := oscillation(8, 8, 40, 0.05, 0.4, 0.02, 0.6)
	r, err := estimator.Fit(context.Background(), []estimator.Clip{clip}, estimator.Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if bad := nonFinite(r); bad != "" {
		t.Fatal(bad)
	}
	if v := window.Certify(r, window.Thresholds{}, nil); !v.Certified {
		t.Fatalf("not certified: %v", v.Reasons)
	}
}
