package flow

import (
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/shiftscene"
)

func scene(w, h int, d []float64, dx, dy, sd float64, seed uint64) estimator.Clip {
	return shiftscene.Clip(w, h, 1.0/30, d, dx, dy, sd, seed)
}

// decay is a free decay of amplitude a: n frames at 30 fps of 2 Hz, ζ 1 %.
func decay(n int, a float64) []float64 { return shiftscene.Decay(n, 1.0/30, a, 2, 0.01) }

func TestReadFollowsSubPixelMotion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      float64
		dx, dy float64
	}{
		{"0.5 px across", 0.5, 1, 0},
		{"0.2 px across", 0.2, 1, 0},
		{"0.05 px across", 0.05, 1, 0},
		{"0.2 px diagonal", 0.2, 0.6, 0.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decay(180, tc.a)
			c := scene(64, 64, d, tc.dx, tc.dy, 0.005, 1)
			r, err := Read(c)
			if err != nil {
				t.Fatal(err)
			}
			slope, corr, m := against(d, r.Z)
			// The scale: a sharp edge's pixels move partly (the one the
			// edge crosses), and which of them count as moving shifts the
			// scale by a few percent (refine's ratio band).
			if corr < 0.99 || math.Abs(math.Abs(slope)-1) > 0.08 {
				t.Errorf("Z against the displacement: slope %.4f, correlation %.5f (want |slope| 1 ± 0.08, correlation ≥ 0.99)", slope, corr)
			}
			if got := math.Abs(r.Dir[0]*tc.dx + r.Dir[1]*tc.dy); got < 0.99 {
				t.Errorf("direction %v, |cos| to the truth %.4f", r.Dir, got)
			}
			// The noise: the residual of Z about the truth.
			var res float64
			for i, z := range r.Z {
				e := z - slope*(d[i]-m)
				res += e * e
			}
			res = math.Sqrt(res / float64(len(d)))
			if r.Noise < res/3 || r.Noise > 3*res {
				t.Errorf("noise %.3g px, residual about the truth %.3g px", r.Noise, res)
			}
			if r.Moving == 0 {
				t.Errorf("no pixel moving of %d", r.Pixels)
			}
			t.Logf("slope %.4f, correlation %.5f, amplitude %.4f (peak %.4f), noise %.2g, residual %.2g, %d of %d pixels moving", slope, corr, r.Amplitude(), r.Peak(), r.Noise, res, r.Moving, r.Pixels)
		})
	}
}

// A still scene reads no motion beyond its noise.
func TestReadStill(t *testing.T) {
	c := scene(64, 64, make([]float64, 180), 1, 0, 0.005, 2)
	r, err := Read(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Moving != 0 {
		t.Errorf("%d pixels of a still scene move", r.Moving)
	}
	if r.Amplitude() > 3*r.Noise {
		t.Errorf("a still scene reads amplitude %.3g px against noise %.3g px", r.Amplitude(), r.Noise)
	}
	t.Logf("amplitude %.3g, noise %.3g, %d of %d pixels moving", r.Amplitude(), r.Noise, r.Moving, r.Pixels)
}

// A flat frame has nothing to read.
func TestReadFlat(t *testing.T) {
	c := estimator.Clip{W: 16, H: 16, Dt: 0.1}
	for range 20 {
		f := make([]float64, 256)
		for i := range f {
			f[i] = 0.5
		}
		c.Frames = append(c.Frames, f)
	}
	if _, err := Read(c); err == nil {
		t.Fatal("a flat clip was read")
	}
}

// BenchmarkRead reads a real camera's window as the daemon does (ReadBinned): a
// 640×60 region resized to 209×20, 6 s at 30 fps.
func BenchmarkRead(b *testing.B) {
	c := shiftscene.Clip(209, 20, 1.0/30, decay(180, 0.2), 1, 0, 0.005, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadBinned(c); err != nil {
			b.Fatal(err)
		}
	}
}

// Motion past the frame pixels' linear range is read on 2×2-binned
// frames, in frame pixels still.
func TestReadBinnedLargerMotion(t *testing.T) {
	d := decay(180, 1.2)
	c := scene(64, 64, d, 1, 0, 0.005, 4)
	r, err := ReadBinned(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Binned != 2 || !r.Linear() {
		t.Fatalf("binned %d, linear %v, peak %.3g", r.Binned, r.Linear(), r.Peak())
	}
	slope, corr, _ := against(d, r.Z)
	t.Logf("slope %.4f, correlation %.5f, peak %.3g, noise %.2g", slope, corr, r.Peak(), r.Noise)
	if corr < 0.99 || math.Abs(slope-1) > 0.15 {
		t.Errorf("binned reading: slope %.4f, correlation %.5f (want 1 ± 0.15, ≥ 0.99)", slope, corr)
	}
}

// against is a reading z against the true displacement d about d's mean
// m: the least-squares slope of z on d and their correlation.
func against(d, z []float64) (slope, corr, m float64) {
	for _, v := range d {
		m += v
	}
	m /= float64(len(d))
	var sxy, sxx, syy float64
	for i, v := range z {
		x := d[i] - m
		sxy += x * v
		sxx += x * x
		syy += v * v
	}
	return sxy / sxx, sxy / math.Sqrt(sxx*syy), m
}
