package simcam

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/stream"
)

// collect runs src until it returns and returns its frames and error.
func collect(t *testing.T, ctx context.Context, src stream.Source) ([]stream.Frame, error) {
	t.Helper()
	var frames []stream.Frame
	err := src.Run(ctx, func(f stream.Frame) error {
		frames = append(frames, f)
		return nil
	})
	return frames, err
}

func TestCameraDeterministicAndContinuous(t *testing.T) {
	opt := Options{Z0: 40, V0: []float64{0, 150}, EventEvery: 500 * time.Millisecond, Seed: 7, MaxFrames: 45}
	a, err := New(opt, stream.Preprocess{Size: 32})
	if err != nil {
		t.Fatal(err)
	}
	if g1, g0 := a.Truth(); g1 != 0.08 || g0 != 4.0016 {
		t.Errorf("Truth = %v, %v, want the underdamped ground truth", g1, g0)
	}
	if a.FPS() != 20 || a.FramesPerEvent() != 10 {
		t.Errorf("FPS %v, FramesPerEvent %d", a.FPS(), a.FramesPerEvent())
	}
	if a.Name() != "synthetic:pendulum/underdamped/seed=7" {
		t.Errorf("Name = %q", a.Name())
	}
	fa, err := collect(t, context.Background(), a)
	if err != io.EOF {
		t.Fatalf("Run = %v, want io.EOF after MaxFrames", err)
	}
	if len(fa) != 45 {
		t.Fatalf("%d frames, want MaxFrames = 45", len(fa))
	}
	b, _ := New(opt, stream.Preprocess{Size: 32})
	fb, _ := collect(t, context.Background(), b)
	for i := range fa {
		if !slices.Equal(fa[i].Pix, fb[i].Pix) || fa[i].Time != fb[i].Time {
			t.Fatalf("frame %d differs between two runs with one seed", i)
		}
	}
	// A second Run of the same source starts over.
	fc, _ := collect(t, context.Background(), a)
	if len(fc) != 45 || !slices.Equal(fc[0].Pix, fa[0].Pix) || fc[0].Seq != 0 {
		t.Error("a second Run does not start over")
	}
	// Another seed gives the same scene (the pendulum has no random parts
	// without a nuisance), another nuisance seed a different one.
	opt.Nuisance = sim.Nuisance{Kind: sim.NuisanceBackground, Level: 2}
	n1, _ := New(opt, stream.Preprocess{})
	opt.Seed = 8
	n2, _ := New(opt, stream.Preprocess{})
	f1, _ := collect(t, context.Background(), n1)
	f2, _ := collect(t, context.Background(), n2)
	if slices.Equal(f1[0].Pix, f2[0].Pix) {
		t.Error("seeds 7 and 8 give the same background")
	}

	for i, f := range fa {
		if f.Seq != i || f.Time != time.Duration(i)*50*time.Millisecond || f.W != 32 || f.H != 32 {
			t.Fatalf("frame %d: Seq %d Time %v %dx%d", i, f.Seq, f.Time, f.W, f.H)
		}
		if i > 0 && f.Wall.Sub(fa[i-1].Wall) != f.Time-fa[i-1].Time {
			t.Fatalf("frame %d: Wall does not follow Time", i)
		}
	}
	// Events are releases: frame 10 (event 1, V0 150) starts again at the
	// same angle as frame 0 (event 0, V0 0), and event 2 replays event 0.
	if !slices.Equal(fa[10].Pix, fa[0].Pix) || !slices.Equal(fa[20].Pix, fa[0].Pix) || !slices.Equal(fa[25].Pix, fa[5].Pix) {
		t.Error("events do not restart from Z0, or event 2 is not event 0 again")
	}
	if slices.Equal(fa[15].Pix, fa[5].Pix) {
		t.Error("events 0 and 1 have the same trajectory despite different V0")
	}
}

func TestCameraRealtime(t *testing.T) {
	s, err := New(Options{Realtime: true, MaxFrames: 11}, stream.Preprocess{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	frames, err := collect(t, context.Background(), s)
	took := time.Since(start)
	if err != io.EOF || len(frames) != 11 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	// 11 frames at 20 fps span 0.5 s.
	t.Logf("11 frames (0.5 s of stream) in %v", took)
	if took < 450*time.Millisecond {
		t.Errorf("0.5 s of frames arrived after %v", took)
	}
	if took > 5*time.Second {
		t.Errorf("0.5 s of frames took %v", took)
	}

	// Cancellation interrupts the pacing promptly.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s, _ = New(Options{Realtime: true, FPS: 1}, stream.Preprocess{})
	start = time.Now()
	_, err = collect(t, ctx, s)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("Run = %v after %v, want the deadline promptly", err, time.Since(start))
	}
}

// TestCameraSharedNormalisation checks that intensity events share one
// observation map: a given z has the same gray level in every event, and
// the levels span the range once over all events.
func TestCameraSharedNormalisation(t *testing.T) {
	for _, sys := range []sim.System{sim.SystemIntensity, sim.SystemScale} {
		opt := Options{System: sys, Regime: sim.RegimeUnderdamped, Z0: 0.4, V0: []float64{0, -200, 200},
			EventEvery: 2 * time.Second, Seed: 3, MaxFrames: 60}
		s, err := New(opt, stream.Preprocess{})
		if err != nil {
			t.Fatal(err)
		}
		frames, _ := collect(t, context.Background(), s)
		per := s.FramesPerEvent() // 20 frames at 10 fps
		if per != 20 || len(frames) != 60 {
			t.Fatalf("%s: %d frames per event, %d frames", sys, per, len(frames))
		}
		// Every event starts at z = Z0, so the first frames must be equal.
		for e := 1; e < 3; e++ {
			if !slices.Equal(frames[e*per].Pix, frames[0].Pix) {
				t.Errorf("%s: event %d draws z0 differently from event 0", sys, e)
			}
		}
		// And the set matches RenderSet's joint normalisation.
		var scenes []sim.Scene
		for e := range 3 {
			scenes = append(scenes, sim.Scene{System: sys, Gamma1: 0.08, Gamma0: 4.0016, Z0: 0.4, V0: opt.V0[e], Duration: 2, Seed: 3 + int64(e)})
		}
		want, _, err := sim.RenderSet(context.Background(), scenes)
		if err != nil {
			t.Fatal(err)
		}
		for e := range 3 {
			for k := range per {
				f, _ := stream.Preprocess{}.ApplyGray(want[e][k])
				if !slices.Equal(f.Pix, frames[e*per+k].Pix) {
					t.Fatalf("%s: event %d frame %d differs from RenderSet's", sys, e, k)
				}
			}
		}
	}
}

func TestOptions(t *testing.T) {
	s, err := New(Options{Gamma1: 0.5, Gamma0: 9, System: sim.SystemScale, Nuisance: sim.Nuisance{Kind: sim.NuisanceJitter, Level: 1}}, stream.Preprocess{})
	if err != nil {
		t.Fatal(err)
	}
	if g1, g0 := s.Truth(); g1 != 0.5 || g0 != 9 {
		t.Errorf("explicit Truth = %v, %v", g1, g0)
	}
	if s.FPS() != 10 || s.FramesPerEvent() != 50 || !strings.Contains(s.Name(), "gamma1=0.5,gamma0=9") || !strings.Contains(s.Name(), "jitter:1") {
		t.Errorf("FPS %v, per event %d, Name %q", s.FPS(), s.FramesPerEvent(), s.Name())
	}
	s, _ = New(Options{Regime: sim.RegimeCritical, Gamma1: -1}, stream.Preprocess{})
	if g1, g0 := s.Truth(); g1 != 4 || g0 != 4 {
		t.Errorf("regime Truth = %v, %v", g1, g0)
	}

	bad := []struct {
		opt   Options
		pre   stream.Preprocess
		field string
	}{
		{Options{System: "spring"}, stream.Preprocess{}, "System"},
		{Options{Regime: "chaotic"}, stream.Preprocess{}, "Regime"},
		{Options{V0: []float64{1, 2, 1}}, stream.Preprocess{}, "V0"},
		{Options{V0: []float64{1, 1}}, stream.Preprocess{}, "V0"},
		{Options{EventEvery: -time.Second}, stream.Preprocess{}, "EventEvery"},
		{Options{EventEvery: 50 * time.Millisecond}, stream.Preprocess{}, "Duration"},
		{Options{FPS: math.NaN()}, stream.Preprocess{}, "FPS"},
		{Options{FPS: -1}, stream.Preprocess{}, "FPS"},
		{Options{Size: 8}, stream.Preprocess{}, "Size"},
		{Options{MaxFrames: -1}, stream.Preprocess{}, "MaxFrames"},
		{Options{Nuisance: sim.Nuisance{Kind: sim.NuisanceClutter}}, stream.Preprocess{}, "Nuisance"},
		{Options{}, stream.Preprocess{ROI: stream.ROI{X: 60, W: 10, H: 10}}, "ROI"},
		{Options{Z0: math.Inf(1)}, stream.Preprocess{}, "Z0"},
	}
	for _, tc := range bad {
		_, err := New(tc.opt, tc.pre)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.HasPrefix(err.Error(), "simcam: synthetic camera: ") {
			t.Errorf("New(%+v, %+v) = %v, want an error naming %s", tc.opt, tc.pre, err, tc.field)
		}
		if err != nil && !errors.Is(err, stream.ErrInvalidOption) && !errors.Is(err, sim.ErrInvalidScene) {
			t.Errorf("%v wraps neither ErrInvalidOption nor sim.ErrInvalidScene", err)
		}
	}
}

func TestCameraEmitError(t *testing.T) {
	s, _ := New(Options{}, stream.Preprocess{Size: 16, Binarize: true})
	stop := errors.New("stop")
	n := 0
	err := s.Run(context.Background(), func(f stream.Frame) error {
		for _, v := range f.Pix {
			if v != 0 && v != 1 {
				t.Fatalf("binarised pixel %v", v)
			}
		}
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Errorf("Run = %v after %d frames, want emit's error unchanged", err, n)
	}
}
