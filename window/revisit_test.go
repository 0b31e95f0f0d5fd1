package window

import (
	"math"
	"testing"
)

// blobFrames draws a bright Gaussian blob of radius 2.5 px at horizontal
// position x[k] (pixels) on a textured 48×24 background, one frame per k.
// light[k] is the camera's gain at frame k; intruder, when set, puts a
// dark 8×8 square at horizontal position intruder(k) (NaN: absent) in
// the top rows.
func blobFrames(x, light []float64, intruder func(k int) float64) [][]float64 {
	const w, h = 48, 24
	out := make([][]float64, len(x))
	for k := range x {
		f := make([]float64, w*h)
		for j := range h {
			for i := range w {
				bg := 0.3 + 0.05*math.Sin(float64(3*i+7*j))
				dx, dy := float64(i)-x[k], float64(j)-16
				v := bg + 0.6*math.Exp(-(dx*dx+dy*dy)/(2*2.5*2.5))
				if intruder != nil {
					if c := intruder(k); !math.IsNaN(c) && math.Abs(float64(i)-c) < 4 && j < 8 {
						v = 0.05
					}
				}
				f[j*w+i] = light[k] * v
			}
		}
		out[k] = f
	}
	return out
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// A latent that is the state, in a scene with an auto-exposure step and
// a passer-by the latent ignores: the frames at one latent level are the
// same scene, and the revisit test must say so.
func TestRevisitIgnoresExposureAndPasserBy(t *testing.T) {
	const fps, n = 30.0, 240
	dt := 1 / fps
	z := make([]float64, n)
	x := make([]float64, n)
	light := ones(n)
	for k := range z {
		tt := float64(k) * dt
		z[k] = math.Exp(-0.15*tt) * math.Cos(2*math.Pi*tt)
		x[k] = 24 + 12*z[k]
		if tt > 3 && tt < 5 {
			light[k] = 1.35 // exposure steps up for two seconds
		}
	}
	passer := func(k int) float64 {
		if tt := float64(k) * dt; tt > 4 && tt < 7 {
			return (tt - 4) / 3 * 48
		}
		return math.NaN()
	}
	frames := [][][]float64{blobFrames(x, light, passer)}
	tr := NewTraceWhite([][]float64{z}, dt, 1e-4)
	cov := CoverageOf(tr, CoverageOptions{})
	if !cov.Holds {
		t.Fatalf("the damped latent is not covered: %+v", cov)
	}
	r := RevisitOf(tr, frames, cov, 24)
	t.Logf("revisit %+v", r)
	if r.Levels == 0 || !(r.Score <= 2) {
		t.Errorf("revisit score %.2f over %d levels: an exposure step and a passer-by refuse a latent that is the state", r.Score, r.Levels)
	}
	if !r.Normalised {
		t.Errorf("frames were not exposure-normalised: %+v", r)
	}
}

// An encoder that folds a monotone motion into an oscillation: the
// latent oscillates while the blob slides once across the frame, so the
// frames at one latent level show the blob in different places.
func TestRevisitCatchesFoldedMotion(t *testing.T) {
	const fps, n = 30.0, 240
	dt := 1 / fps
	z := make([]float64, n)
	x := make([]float64, n)
	for k := range z {
		tt := float64(k) * dt
		z[k] = math.Exp(-0.15*tt) * math.Cos(2*math.Pi*tt)
		x[k] = 6 + 36*(1-math.Exp(-tt/3)) // overdamped-like slide
	}
	frames := [][][]float64{blobFrames(x, ones(n), nil)}
	tr := NewTraceWhite([][]float64{z}, dt, 1e-4)
	cov := CoverageOf(tr, CoverageOptions{})
	if !cov.Holds {
		t.Fatalf("the folded latent is not covered: %+v", cov)
	}
	r := RevisitOf(tr, frames, cov, 24)
	t.Logf("revisit %+v", r)
	if !(r.Score > 2) {
		t.Errorf("revisit score %.2f: a folded monotone motion passes as revisits", r.Score)
	}
}
