package tracker

import (
	"context"
	"reflect"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// TestFollowAheadWeighsAsWeigh checks that following the objects while
// the encoder is fitted (FollowAhead, Options.Normalized) reports what
// following them afterwards (Weigh) does: the same fit and verdict.
func TestFollowAheadWeighsAsWeigh(t *testing.T) {
	const w, h, dt = 30, 100, 1.0 / 30
	ys := damped(150, dt, 50, 30, 0.8, 30)
	frames := scene(w, h, 3, 15, ys, 0.01, 2)
	// An exposure step the encoder's preset undoes before either reads.
	for _, f := range frames[70:] {
		for j := range f {
			f[j] = 1.2*f[j] + 0.05
		}
	}
	clips, p, enc := fitFrames(t, w, h, dt, frames)
	ctx := context.Background()
	want, wantV, _ := Weigh(ctx, clips, enc, p, window.Thresholds{}, nil, Stream{}, nil)

	seen, norm := clips, (*estimator.Normalized)(nil)
	var err error
	if p.Exposure {
		if norm, err = estimator.NormalizeClips(clips); err != nil {
			t.Fatal(err)
		}
		seen = norm.Clips
	}
	ahead := FollowAhead(ctx, seen)
	enc2, err := estimator.Fit(ctx, clips, estimator.Options{Preset: p, Seed: 1, Normalized: norm})
	if err != nil {
		t.Fatal(err)
	}
	got, gotV, _ := ahead.Weigh(ctx, clips, enc2, p, window.Thresholds{}, nil, nil)
	if got.Readout != want.Readout || got.Gamma0 != want.Gamma0 || got.Gamma1 != want.Gamma1 ||
		got.Sigma0 != want.Sigma0 || got.Sigma1 != want.Sigma1 || gotV.Status != wantV.Status {
		t.Errorf("ahead: %s γ0 %v ± %v γ1 %v ± %v %s; after: %s γ0 %v ± %v γ1 %v ± %v %s",
			got.Readout, got.Gamma0, got.Sigma0, got.Gamma1, got.Sigma1, gotV.Status,
			want.Readout, want.Gamma0, want.Sigma0, want.Gamma1, want.Sigma1, wantV.Status)
	}
	if !reflect.DeepEqual(got.Exposure, want.Exposure) {
		t.Errorf("exposure record %+v, want %+v", got.Exposure, want.Exposure)
	}
	if want.Readout == enc.Readout {
		t.Logf("the encoder's readout won (%s); the tracked candidates were still compared", want.Readout)
	}
}

// TestFollowStreamWeighsAsWeigh: following the objects first, with the
// camera's cache (FollowStream), then weighing gives Weigh's fit and
// verdict to the bit; and Swing tells how far the followed object swings
// (30 px from its rest, decaying: far past a small-motion reading),
// while a still scene's swing is small.
func TestFollowStreamWeighsAsWeigh(t *testing.T) {
	const w, h, dt = 30, 100, 1.0 / 30
	frames := scene(w, h, 3, 15, damped(150, dt, 50, 30, 0.8, 30), 0.01, 2)
	clips, p, enc := fitFrames(t, w, h, dt, frames)
	ctx := context.Background()
	want, wantV, wantT := Weigh(ctx, clips, enc, p, window.Thresholds{}, nil, Stream{Cache: NewCache()}, nil)
	ahead := FollowStream(ctx, clips, enc, Stream{Cache: NewCache()})
	if sw := ahead.Swing(0.8); sw < 10 {
		t.Errorf("swing %.3g px of a bob released 30 px from rest; want ≥ 10", sw)
	}
	got, gotV, gotT := ahead.Weigh(ctx, clips, enc, p, window.Thresholds{}, nil, nil)
	if got.Readout != want.Readout || got.Gamma0 != want.Gamma0 || got.Gamma1 != want.Gamma1 ||
		got.Sigma0 != want.Sigma0 || got.Sigma1 != want.Sigma1 || gotV.Status != wantV.Status || len(gotT) != len(wantT) {
		t.Errorf("followed first: %s γ0 %v ± %v γ1 %v ± %v %s (%d tracked); Weigh: %s γ0 %v ± %v γ1 %v ± %v %s (%d)",
			got.Readout, got.Gamma0, got.Sigma0, got.Gamma1, got.Sigma1, gotV.Status, len(gotT),
			want.Readout, want.Gamma0, want.Sigma0, want.Gamma1, want.Sigma1, wantV.Status, len(wantT))
	}
	sc, _, enc2 := fitFrames(t, w, h, dt, scene(w, h, 3, 15, damped(150, dt, 50, 0.2, 0.8, 30), 0.01, 2))
	if sw := FollowStream(ctx, sc, enc2, Stream{}).Swing(0.8); sw > 1 {
		t.Errorf("swing %.3g px of a bob moving 0.2 px; want ≤ 1", sw)
	}
}

// fitFrames is one clip of frames and the default preset's encoder fit of
// it (seed 1).
func fitFrames(t *testing.T, w, h int, dt float64, frames [][]float64) ([]estimator.Clip, estimator.Preset, *estimator.Result) {
	t.Helper()
	clips := []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}
	p, _ := estimator.LookupPreset(estimator.DefaultPreset)
	enc, err := estimator.Fit(context.Background(), clips, estimator.Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return clips, p, enc
}
