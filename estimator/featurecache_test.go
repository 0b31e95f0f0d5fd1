package estimator

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/physd/physd/internal/gctest"
)

// The cache returns bitwise the features computed without it, across
// overlapping calls, after W or μ change, and forgets frames no longer
// read.
func TestFeatureCache(t *testing.T) {
	const p, k, n = 64, 8, 40
	rng := rand.New(rand.NewPCG(1, 2))
	frames := make([][]float64, n)
	for i := range frames {
		frames[i] = make([]float64, p)
		for j := range frames[i] {
			frames[i][j] = rng.Float64()
		}
	}
	plain := NewLowRank(rand.New(rand.NewPCG(3, 4)), p, k, 4)
	for i, w := range data(plain.W) {
		data(plain.W)[i] = w + rng.NormFloat64()
	}
	for j := range plain.Mean {
		plain.Mean[j] = 0.5 + 0.01*rng.NormFloat64()
	}
	cached := NewLowRank(rand.New(rand.NewPCG(3, 4)), p, k, 4)
	copy(data(cached.W), data(plain.W))
	copy(cached.Mean, plain.Mean)
	cached.EnableFeatureCache()

	check := func(what string, fs [][]float64) {
		t.Helper()
		want, got := plain.features(fs), cached.features(fs)
		if !slices.Equal(want, got) {
			t.Fatalf("%s: cached features differ", what)
		}
	}
	// Overlapping windows of 20 frames, hop 5, each read twice.
	for s := 0; s+20 <= n; s += 5 {
		check("window", frames[s:s+20])
		check("window again", frames[s:s+20])
	}
	if got := len(cached.cache.rows); got > n {
		t.Errorf("%d rows kept for %d frames", got, n)
	}
	// W and μ move (a cold start): every row is recomputed.
	data(plain.W)[3] += 0.25
	data(cached.W)[3] += 0.25
	check("after W moved", frames[10:30])
	plain.Mean[7] -= 0.1
	cached.Mean[7] -= 0.1
	check("after μ moved", frames[10:30])
	// A buffer recycled for another frame is not taken for the old one.
	for j := range frames[12] {
		frames[12][j] = rng.Float64()
	}
	check("a buffer rewritten", frames[10:30])
	// Frames not read for more than cacheKeep calls are dropped.
	for range cacheKeep + 1 {
		check("last frames", frames[n-5:])
	}
	if got := len(cached.cache.rows); got != 5 {
		t.Errorf("%d rows kept after reading 5 frames %d times, want 5", got, cacheKeep+1)
	}
}

// The cache keeps no frame alive: frames read once (an exposure-normalised
// copy of a window) are collected once the caller lets them go, while their
// rows wait to be dropped.
func TestFeatureCacheKeepsNoFrame(t *testing.T) {
	const p, k = 64, 8
	e := NewLowRank(rand.New(rand.NewPCG(3, 4)), p, k, 4)
	e.EnableFeatureCache()
	watch := gctest.New(8)
	func() {
		frames := make([][]float64, 8)
		for i := range frames {
			frames[i] = make([]float64, p)
			frames[i][0] = float64(i)
			gctest.Add(watch, &frames[i][0])
		}
		e.features(frames)
	}()
	if len(e.cache.rows) != 8 {
		t.Fatalf("%d rows cached, want 8", len(e.cache.rows))
	}
	watch.Wait(t, "the feature cache")
	runtime.KeepAlive(e)
}
