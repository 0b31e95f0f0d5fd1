package flow

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// ambientClip renders 20 s of a 64×64 block swaying under white-noise
// forcing (rms px), with the true displacement.
func ambientClip(t *testing.T, rms float64, seed int64) (estimator.Clip, []float64) {
	t.Helper()
	s := sim.Structure{W: 64, H: 64, FPS: 30, Duration: 20, Seed: seed, Excitation: sim.ExcitationAmbient,
		Modes: []sim.Mode{{Fn: 1, Zeta: 0.02, AmplitudePx: rms}}}
	frames, d, err := sim.RenderStructure(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	c := estimator.Clip{W: 64, H: 64, Dt: 1.0 / 30}
	for _, f := range frames {
		p := make([]float64, len(f.Pix))
		for i, v := range f.Pix {
			p[i] = float64(v) / 255
		}
		c.Frames = append(c.Frames, p)
	}
	return c, d
}

// slope is the regression slope of z on d and their correlation.
func slope(z, d []float64) (b, r float64) {
	var mz, md float64
	for i := range z {
		mz += z[i] / float64(len(z))
		md += d[i] / float64(len(d))
	}
	var szd, sdd, szz float64
	for i := range z {
		szd += (z[i] - mz) * (d[i] - md)
		sdd += (d[i] - md) * (d[i] - md)
		szz += (z[i] - mz) * (z[i] - mz)
	}
	return szd / sdd, szd / math.Sqrt(sdd*szz)
}

// A frozen readout reads a swaying block's displacement frame by frame,
// in frame pixels, from a sub-pixel sway to one of pixels. Its shape is
// what the fit needs (the correlation with the truth); its scale is the
// calibrating reading's, within a few per cent inside the linear model
// and 0.77–1.25 beyond it (a 1–2 px rms sway on 64×64 frames peaks past
// even the 4×4 bins' range), which only the amplitude reads.
func TestCalibrateAutoReadsDisplacement(t *testing.T) {
	for _, c := range []struct {
		rms    float64
		minR   float64
		lo, hi float64
	}{{0.3, 0.99, 0.85, 1.15}, {1, 0.98, 0.75, 1.3}, {2, 0.98, 0.75, 1.3}} {
		for seed := int64(1); seed <= 3; seed++ {
			clip, d := ambientClip(t, c.rms, seed)
			l, r, err := CalibrateAuto(clip)
			if err != nil {
				t.Fatalf("rms %g seed %d: %v", c.rms, seed, err)
			}
			z := make([]float64, len(clip.Frames))
			for i, f := range clip.Frames {
				z[i] = l.Read(f)
			}
			b, rr := slope(z, d)
			if b < 0 { // the direction's sign is the reading's
				b, rr = -b, -rr
			}
			t.Logf("rms %g px seed %d: bin %d, %d pixels, slope %.3f, correlation %.4f", c.rms, seed, r.Binned, l.Pixels, b, rr)
			if rr < c.minR || b < c.lo || b > c.hi {
				t.Errorf("rms %g px seed %d: the readout reads slope %.3f (want %g–%g), correlation %.4f (want ≥ %g)", c.rms, seed, b, c.lo, c.hi, rr, c.minR)
			}
		}
	}
}
