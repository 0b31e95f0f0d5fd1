package motion

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/physd/physd/internal/gctest"
	"github.com/physd/physd/sim"
)

// Overlapping windows measured through a Cache give the tracks measured
// without one, bitwise, with and without camera motion; the cache reuses
// the frames and pairs the windows share, and forgets the rest.
func TestCacheSameTracks(t *testing.T) {
	ctx := context.Background()
	for _, n := range []sim.Nuisance{{}, {Kind: sim.NuisanceJitter, Level: 1}} {
		frames := pendulum(t, n, 1) // 94 frames, 64×64
		c := NewCache()
		detected := 0
		for s := 0; s+60 <= len(frames); s += 10 {
			win := [][][]float64{frames[s : s+60]}
			want, err := Measure(ctx, win, 64, 64, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Measure(ctx, win, 64, 64, Options{Cache: c})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%v, window at %d: cached track %+v, want %+v", n, s, got, want)
			}
			if got.Detected {
				detected++
			}
		}
		if n.Kind == sim.NuisanceJitter && detected == 0 {
			t.Errorf("jitter: camera motion never detected; the full-size path went untested")
		}
		if len(c.distIDs) != 60 {
			t.Errorf("%v: the last window's distances are kept for %d frames, not its 60", n, len(c.distIDs))
		}
		if len(c.descs) == 0 || len(c.pairs) == 0 || len(c.descs) > 2*len(frames) {
			t.Errorf("%v: %d frames and %d pairs kept for %d frames", n, len(c.descs), len(c.pairs), len(frames))
		}
		if len(c.preps) == 0 || len(c.preps) > 2*len(frames) {
			t.Errorf("%v: %d preparations kept for %d frames", n, len(c.preps), len(frames))
		}
	}
	// A rewritten buffer is measured afresh.
	frames := pendulum(t, sim.Nuisance{Kind: sim.NuisanceJitter, Level: 1}, 2)
	other := pendulum(t, sim.Nuisance{Kind: sim.NuisanceJitter, Level: 1}, 3)
	c := NewCache()
	win := [][][]float64{frames[:60]}
	if _, err := Measure(ctx, win, 64, 64, Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		copy(frames[i], other[i])
	}
	want, _ := Measure(ctx, win, 64, 64, Options{})
	got, _ := Measure(ctx, win, 64, 64, Options{Cache: c})
	if !reflect.DeepEqual(want, got) {
		t.Errorf("rewritten frames: cached track %+v, want %+v", got, want)
	}
}

// The cache keeps no frame alive: a window's frames are collected once the
// caller lets them go, while their entries wait to be dropped.
func TestCacheKeepsNoFrame(t *testing.T) {
	c := NewCache()
	watch := gctest.New(60)
	func() {
		frames := pendulum(t, sim.Nuisance{Kind: sim.NuisanceJitter, Level: 1}, 4)[:60]
		for i := range frames {
			gctest.Add(watch, &frames[i][0])
		}
		if _, err := Measure(context.Background(), [][][]float64{frames}, 64, 64, Options{Cache: c}); err != nil {
			t.Fatal(err)
		}
	}()
	if len(c.halves)+len(c.descs)+len(c.pairs) == 0 {
		t.Fatal("nothing cached")
	}
	watch.Wait(t, "the motion cache")
	runtime.KeepAlive(c)
}

// BenchmarkMeasureWindowCached is BenchmarkMeasureWindow on a daemon's
// stream: each window shares all but a hop of 20 frames with the last.
func BenchmarkMeasureWindowCached(b *testing.B) {
	frames := pendulum(b, sim.Nuisance{}, 1)
	frames = append(frames, pendulum(b, sim.Nuisance{}, 2)...)
	c := NewCache()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := (i * 20) % (len(frames) - 94)
		if _, err := Measure(context.Background(), [][][]float64{frames[s : s+94]}, 64, 64, Options{Cache: c}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
