package motion

import (
	"context"
	"errors"
	"image"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/physd/physd/internal/par"
	"github.com/physd/physd/sim"
)

// gray converts a rendered frame to [0, 1] floats.
func gray(g *image.Gray) []float64 {
	out := make([]float64, len(g.Pix))
	for i, v := range g.Pix {
		out[i] = float64(v) / 255
	}
	return out
}

// pendulum renders the dev scene of the paper's stress test: an
// underdamped pendulum, 1.5π s at 20 fps, with a nuisance.
func pendulum(t testing.TB, n sim.Nuisance, seed int64) [][]float64 {
	t.Helper()
	s := sim.Scene{System: sim.SystemPendulum, Gamma1: 0.08, Gamma0: 4.0016, Z0: 50, Duration: 1.5 * math.Pi, Seed: seed, Nuisance: n}
	fr, _, err := sim.Render(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(fr))
	for i, f := range fr {
		out[i] = gray(f)
	}
	return out
}

// texture is a smooth random w×h image (a sum of random cosines), which
// any shift changes.
func texture(rng *rand.Rand, w, h int) func(x, y float64) float64 {
	type wave struct{ kx, ky, ph, a float64 }
	var ws []wave
	for range 12 {
		ws = append(ws, wave{kx: 2 * math.Pi * rng.Float64() * 5 / float64(w), ky: 2 * math.Pi * rng.Float64() * 5 / float64(h), ph: 2 * math.Pi * rng.Float64(), a: rng.Float64()})
	}
	return func(x, y float64) float64 {
		v := 0.5
		for _, q := range ws {
			v += 0.04 * q.a * math.Cos(q.kx*x+q.ky*y+q.ph)
		}
		return v
	}
}

func sampled(f func(x, y float64) float64, w, h int, d Shift) []float64 {
	out := make([]float64, w*h)
	for y := range h {
		for x := range w {
			out[y*w+x] = f(float64(x)-d.X, float64(y)-d.Y)
		}
	}
	return out
}

// Register recovers a known sub-pixel translation of a textured frame.
func TestRegisterSubpixel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 64, 48
	f := texture(rng, w, h)
	a := sampled(f, w, h, Shift{})
	for _, d := range []Shift{{0, 0}, {1.3, -0.4}, {-5.7, 2.25}, {0.2, 7.5}} {
		got, resid, ok := Register(a, sampled(f, w, h, d), w, h)
		if !ok {
			t.Fatalf("shift %v: not registered", d)
		}
		if e := got.Sub(d).Norm(); e > 0.05 {
			t.Errorf("shift %v: measured %v (error %.3f px), residual %.3g", d, got, e, resid)
		}
	}
	if _, _, ok := Register(make([]float64, 16), make([]float64, 16), 4, 4); ok {
		t.Error("4×4 frames registered")
	}
}

// Measure finds a shaking camera in the paper's jitter scenes (a
// sinusoidal sway and two random walks) and moves it out, and finds none
// where only the object, clutter or the light moves.
func TestMeasureFindsShakeOnly(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     sim.Nuisance
		shake bool
	}{
		{"clean", sim.Nuisance{}, false},
		{"jitter L1", sim.Nuisance{Kind: sim.NuisanceJitter, Level: 1}, true},
		{"jitter L2", sim.Nuisance{Kind: sim.NuisanceJitter, Level: 2}, true},
		{"jitter L3", sim.Nuisance{Kind: sim.NuisanceJitter, Level: 3}, true},
		{"clutter L1", sim.Nuisance{Kind: sim.NuisanceClutter, Level: 1}, false},
		{"clutter L3", sim.Nuisance{Kind: sim.NuisanceClutter, Level: 3}, false},
		{"brightness L2", sim.Nuisance{Kind: sim.NuisanceBrightness, Level: 2}, false},
		{"background L3", sim.Nuisance{Kind: sim.NuisanceBackground, Level: 3}, false},
	} {
		frames := pendulum(t, c.n, 2)
		tr, err := Measure(context.Background(), [][][]float64{frames}, 64, 64, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s: %s", c.name, tr.Summary())
		if tr.Detected != c.shake || tr.Applied != c.shake {
			t.Errorf("%s: detected %v applied %v, want %v", c.name, tr.Detected, tr.Applied, c.shake)
		}
		moved, err := tr.Stabilize([][][]float64{frames}, 64, 64)
		if err != nil {
			t.Fatal(err)
		}
		if !c.shake && &moved[0][0][0] != &frames[0][0] {
			t.Errorf("%s: frames copied without camera motion", c.name)
		}
	}
}

// A long window is tested on a subsample and gives the same answer.
func TestMeasureLongWindowSubsampled(t *testing.T) {
	clean := pendulum(t, sim.Nuisance{}, 3)
	var long [][]float64
	for len(long) < 2*detectFrames {
		long = append(long, clean...)
	}
	tr, err := Measure(context.Background(), [][][]float64{long}, 64, 64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Detected || len(tr.Shifts) != 1 || len(tr.Shifts[0]) != len(long) {
		t.Errorf("long clean window: %s, %d clips of shifts", tr.Summary(), len(tr.Shifts))
	}
}

// MeasureReference measures a still region's known shifts, in the
// estimator's pixels, and refuses a region that is not still or is plain.
func TestMeasureReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const w, h = 48, 40
	f := texture(rng, w, h)
	var patches [][]float64
	var want []Shift
	for k := range 60 {
		d := Shift{2 * math.Sin(float64(k)/3), 1.5 * math.Cos(float64(k)/5)}
		want = append(want, d)
		patches = append(patches, sampled(f, w, h, d))
	}
	scale := Shift{0.5, 0.25}
	tr, err := MeasureReference(context.Background(), [][][]float64{patches}, w, h, scale)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Detected || !tr.Applied {
		t.Fatalf("shaking reference: %s", tr.Summary())
	}
	// The track is relative to the median position: compare differences.
	for k := 1; k < len(want); k++ {
		gd := tr.Shifts[0][k].Sub(tr.Shifts[0][0])
		wd := want[k].Sub(want[0]).Scale(scale.X, scale.Y)
		if e := gd.Sub(wd).Norm(); e > 0.03 {
			t.Fatalf("frame %d: measured %v relative to frame 0, want %v", k, gd, wd)
		}
	}
	still := [][]float64{patches[0], patches[0], patches[0]}
	if tr, err := MeasureReference(context.Background(), [][][]float64{still}, w, h, scale); err != nil || tr.Detected {
		t.Errorf("still reference: %v, %v", tr, err)
	}
	busy := [][]float64{patches[0], sampled(texture(rng, w, h), w, h, Shift{}), sampled(texture(rng, w, h), w, h, Shift{})}
	if _, err := MeasureReference(context.Background(), [][][]float64{busy}, w, h, scale); !errors.Is(err, ErrInvalid) {
		t.Errorf("a reference that changes: %v, want ErrInvalid", err)
	}
	plain := [][]float64{make([]float64, w*h), make([]float64, w*h)}
	if _, err := MeasureReference(context.Background(), [][][]float64{plain}, w, h, scale); !errors.Is(err, ErrInvalid) {
		t.Errorf("a plain reference: %v, want ErrInvalid", err)
	}
}

// Bad frames are errors, not panics.
func TestMeasureInvalid(t *testing.T) {
	for name, clips := range map[string][][][]float64{
		"none":       nil,
		"short":      {{make([]float64, 64*64), make([]float64, 10)}},
		"NaN":        {{make([]float64, 64*64), append(make([]float64, 64*64-1), math.NaN())}},
		"empty clip": {{}},
	} {
		if _, err := Measure(context.Background(), clips, 64, 64, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// Frames too small to register are not an error: nothing measured.
	tr, err := Measure(context.Background(), [][][]float64{{make([]float64, 16), make([]float64, 16)}}, 4, 4, Options{})
	if err != nil || tr.Detected || len(tr.Shifts) != 1 || len(tr.Shifts[0]) != 2 || tr.Note == "" {
		t.Errorf("4×4: %+v, %v", tr, err)
	}
	if _, err := Measure(context.Background(), [][][]float64{{make([]float64, 16)}}, 0, 16, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("0×16: %v", err)
	}
}

// BenchmarkMeasureWindow is one daemon window's camera-motion test: the
// synthetic camera's 1.5π s of a clean pendulum at 20 fps, 64×64.
func BenchmarkMeasureWindow(b *testing.B) {
	frames := pendulum(b, sim.Nuisance{}, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Measure(context.Background(), [][][]float64{frames}, 64, 64, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The number of goroutines (par.WithWorkers) does not change a track.
func TestMeasureWorkers(t *testing.T) {
	frames := pendulum(t, sim.Nuisance{Kind: sim.NuisanceJitter, Level: 2}, 2)
	var tracks []*Track
	for _, n := range []int{1, 2, 3} {
		tr, err := Measure(par.WithWorkers(context.Background(), n), [][][]float64{frames}, 64, 64, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tracks = append(tracks, tr)
	}
	for i, tr := range tracks[1:] {
		if !reflect.DeepEqual(tr, tracks[0]) {
			t.Errorf("%d workers: the track differs from one worker's", i+2)
		}
	}
	if !tracks[0].Detected {
		t.Error("the jitter was not detected: the test compares nothing")
	}
}
