package tracker

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
)

// cover paints a grey bar (an occluder: a hand, a passer-by) over rows
// [y0, y1) of frames [from, to).
func cover(frames [][]float64, w, y0, y1, from, to int) {
	for i := from; i < to; i++ {
		for y := y0; y < y1; y++ {
			for x := range w {
				frames[i][y*w+x] = 0.35
			}
		}
	}
}

// An object hidden for a while and found again is one path of two runs,
// fitted as one free response across the gap: (γ1, γ0) come back as if
// it had been seen throughout, and the runs keep their frames.
func TestFollowAcrossAnOcclusion(t *testing.T) {
	const w, h, dt = 30, 100, 1.0 / 30
	g1, g0 := 0.4, 20.0
	ys := damped(150, dt, 50, 30, g1, g0)
	frames := scene(w, h, 3, 15, ys, 0.005, 5)
	// The occluder covers the whole frame's middle band for frames
	// 60–79: the object is lost there, whatever it does.
	cover(frames, w, 0, h, 60, 80)
	clips := []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}
	paths, err := Follow(context.Background(), clips, Options{Objects: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := paths[0]
	if len(p.Pos) != 2 || p.First[0] != 0 || p.First[0]+len(p.Pos[0]) > 60-lossMargin || p.First[1] < 80+lossMargin || p.First[1]+len(p.Pos[1]) != 150 {
		t.Fatalf("%s: want two runs, from 0 to before %d and from after %d to the end", p.Name(), 60-lossMargin, 80+lossMargin)
	}
	// Positions move with the object across the gap (the template's
	// corner is a fixed offset from its centre).
	off := p.Pos[0][0].Y - ys[p.First[0]]
	for i, run := range p.Pos {
		for j, q := range run {
			k := p.First[i] + j
			if d := math.Abs(q.Y - off - ys[k]); d > 0.25 {
				t.Fatalf("run %d frame %d: %.2f px from the object", i, k, d)
			}
		}
	}
	p0, _ := estimator.LookupPreset(estimator.DefaultPreset)
	cands, err := Candidates(context.Background(), clips, nil, p0, Options{Objects: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := cands[0]
	if r.ClipCount() != 1 || len(r.Latents) != 2 || r.First[1] != p.First[1] {
		t.Errorf("result: %d clips, %d sequences, first %v", r.ClipCount(), len(r.Latents), r.First)
	}
	if math.Abs(r.Gamma0-g0)/g0 > 0.005 || math.Abs(r.Gamma1-g1) > 0.02 || len(r.Trajectory.X0) != 1 {
		t.Errorf("fit across the gap: γ0 %.4f γ1 %.4f with %d initial states; want %.1f, %.2f, one", r.Gamma0, r.Gamma1, len(r.Trajectory.X0), g0, g1)
	}
}

// After a loss the object is looked for only where it has been: a
// look-alike elsewhere in the frame is not taken for it.
func TestLookAlikeIsNotReacquired(t *testing.T) {
	const w, h, dt = 60, 100, 1.0 / 30
	ys := damped(150, dt, 50, 20, 0.4, 20)
	frames := scene(w, h, 3, 15, ys, 0.005, 6)
	// The object vanishes for good at frame 70 (its pixels grey), and a
	// twin swings far to its right from then on.
	twin := scene(w, h, 3, 45, damped(150, dt, 50, 20, 0.4, 20), 0.005, 7)
	for i := 70; i < len(frames); i++ {
		for y := range h {
			for x := range w {
				j := y*w + x
				if x < 30 {
					frames[i][j] = 0.6
				} else {
					frames[i][j] = twin[i][j]
				}
			}
		}
	}
	paths, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}, Options{Objects: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		var xs []float64
		for _, run := range p.Pos {
			for _, q := range run {
				xs = append(xs, q.X)
			}
		}
		if lo, hi := minMax(xs); hi-lo > 5 {
			t.Errorf("%s: followed from x %.1f to %.1f: the twin was taken for the object", p.Name(), lo, hi)
		}
	}
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}
