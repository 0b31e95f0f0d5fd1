package stream

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// grid returns n times start, start+step, ...
func grid(n int, step time.Duration) []time.Duration {
	t := make([]time.Duration, n)
	for i := range t {
		t[i] = time.Duration(i) * step
	}
	return t
}

// without drops the times with index in [lo, hi].
func without(t []time.Duration, lo, hi int) []time.Duration {
	var out []time.Duration
	for i, v := range t {
		if i < lo || i > hi {
			out = append(out, v)
		}
	}
	return out
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestAnalyzeTiming(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	jitter := grid(200, 40*time.Millisecond)
	for i := range jitter {
		jitter[i] += ms(rng.Float64()*8 - 4) // steps 32–48 ms
	}
	quantised := make([]time.Duration, 300) // 300 fps in a 1 ms time base
	for i := range quantised {
		quantised[i] = time.Duration(i*10/3) * time.Millisecond
	}
	drift := grid(50, 40*time.Millisecond)
	for i := 1; i <= 50; i++ {
		drift = append(drift, drift[49]+time.Duration(i)*ms(33.3))
	}
	duplicate := grid(40, 50*time.Millisecond)
	duplicate[21] = duplicate[20]

	tests := []struct {
		name      string
		times     []time.Duration
		declared  float64
		override  float64
		fps       float64 // want, within 0.5 %
		irregular bool
		median    time.Duration // want, if not 0
		assumed   []string      // substrings of Assumed
	}{
		{name: "declared agrees", times: grid(40, 50*time.Millisecond), declared: 20, fps: 20, median: 50 * time.Millisecond,
			assumed: []string{"container declares 20 fps and frames are evenly spaced at 50.0 ms: assuming 20.00 fps"}},
		{name: "declared 1000 fps", times: grid(50, 40*time.Millisecond), declared: 1000, fps: 25, median: 40 * time.Millisecond,
			assumed: []string{"container declares 1000 fps but frames are evenly spaced at 40.0 ms: assuming 25.00 fps"}},
		{name: "declared 90000 fps", times: grid(50, 40*time.Millisecond), declared: 90000, fps: 25,
			assumed: []string{"declares 90000 fps but", "assuming 25.00 fps"}},
		{name: "no declared rate", times: grid(10, 40*time.Millisecond), declared: 0, fps: 25,
			assumed: []string{"declares no rate", "assuming 25.00 fps"}},
		{name: "NaN declared, negative override ignored", times: grid(10, 40*time.Millisecond), declared: math.NaN(), override: -1, fps: 25,
			assumed: []string{"declares no rate"}},
		{name: "jitter 32-48 ms is not irregularity", times: jitter, declared: 1000, fps: 25,
			assumed: []string{"declares 1000 fps but frame timestamps jitter", "evenly spaced at span/(n−1)", "assuming 25.0"}},
		{name: "quantised 300 fps", times: quantised, declared: 300, fps: 300,
			assumed: []string{"are quantised", "assuming 300.00 fps"}},
		{name: "declared 3 % off is believed but noted", times: grid(40, ms(38.8)), declared: 25, fps: 25,
			assumed: []string{"assuming 25.00 fps", "% off"}},
		{name: "gap", times: without(grid(40, 50*time.Millisecond), 10, 14), declared: 17.5, fps: 20, irregular: true, median: 50 * time.Millisecond,
			assumed: []string{"irregular", "1 gap(s)", "at 0.450 s (300.0 ms, 6.0 steps)", "20.00 fps"}},
		{name: "many gaps are listed briefly", times: without(without(without(without(grid(80, 50*time.Millisecond), 60, 61), 40, 41), 20, 21), 5, 6), fps: 20, irregular: true,
			assumed: []string{"4 gap(s)", "and 1 more"}},
		{name: "duplicate time", times: duplicate, declared: 20, fps: 20, irregular: true,
			assumed: []string{"shorter than 0.5×", "at 1.000 s (0.000 ms"}},
		{name: "rate changes", times: drift, declared: 25, irregular: true, fps: 1 / ms(33.3).Seconds(),
			assumed: []string{"spacing varies", "drift"}},
		{name: "override wins", times: grid(40, 40*time.Millisecond), declared: 25, override: 100, fps: 100,
			assumed: []string{"FPS override wins: assuming 100.00 fps", "container declares 25 fps", "evenly spaced at 40.0 ms"}},
		{name: "override over irregular timestamps", times: without(grid(40, 50*time.Millisecond), 10, 14), override: 30, fps: 30,
			assumed: []string{"override", "irregular", "gap"}},
		{name: "one frame", times: grid(1, 0), declared: 30, fps: 30, assumed: []string{"only one usable frame time", "declared 30.00 fps"}},
		{name: "no frames, no rate", times: nil, fps: 0, assumed: []string{"no usable frame times", "unknown"}},
		{name: "all times equal", times: make([]time.Duration, 10), declared: 25, fps: 25, assumed: []string{"unusable"}},
		{name: "decreasing times", times: []time.Duration{0, ms(40), ms(80), ms(60), ms(120), ms(160)}, declared: 25, fps: 25, irregular: true,
			assumed: []string{"shorter"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AnalyzeTiming(tc.times, tc.declared, tc.override)
			t.Logf("%+v", got)
			if tc.fps == 0 && got.FPS != 0 || tc.fps != 0 && math.Abs(got.FPS/tc.fps-1) > 0.005 {
				t.Errorf("FPS = %v, want %v", got.FPS, tc.fps)
			}
			if got.Irregular != tc.irregular {
				t.Errorf("Irregular = %v, want %v", got.Irregular, tc.irregular)
			}
			if tc.median != 0 && got.MedianStep != tc.median {
				t.Errorf("MedianStep = %v, want %v", got.MedianStep, tc.median)
			}
			if validRate(tc.declared) && got.DeclaredFPS != tc.declared {
				t.Errorf("DeclaredFPS = %v, want %v", got.DeclaredFPS, tc.declared)
			}
			for _, s := range tc.assumed {
				if !strings.Contains(got.Assumed, s) {
					t.Errorf("Assumed = %q, want it to contain %q", got.Assumed, s)
				}
			}
		})
	}
}

// TestAnalyzeTimingNeverPanics feeds random, unsorted and extreme inputs.
func TestAnalyzeTimingNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rates := []float64{0, -5, 1e-300, 25, 1e308, math.Inf(1), math.NaN()}
	for i := 0; i < 2000; i++ {
		n := rng.IntN(12)
		times := make([]time.Duration, n)
		for j := range times {
			switch rng.IntN(4) {
			case 0:
				times[j] = time.Duration(rng.Int64())
			case 1:
				times[j] = -time.Duration(rng.Int64())
			default:
				times[j] = time.Duration(rng.IntN(1000)) * time.Millisecond
			}
		}
		got := AnalyzeTiming(times, rates[rng.IntN(len(rates))], rates[rng.IntN(len(rates))])
		if math.IsNaN(got.FPS) || math.IsInf(got.FPS, 0) || got.FPS < 0 || got.Assumed == "" {
			t.Fatalf("AnalyzeTiming(%v) = %+v", times, got)
		}
	}
}
