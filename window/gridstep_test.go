package window

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/frame"
)

// TestSlicerGridStep: a window's step is the clock its frames were taken
// on. Stamps jittered ±10 ms around a 100 ms grid: within 0.3 % of it.
// A 20 fps sender that dropped one picture in fifty before encoding (the
// steps that lost one are 100 ms, Seq does not jump), binned by 2: no
// window spans a lost picture (the binner breaks there, as the Slicer
// does at bin 1), and a pendulum's γ0 fitted on each window's step is
// within 1 %. (Before, the bins hid the lost time: 146 windows of this
// stream, γ0 up to 14 % high on the median step, 5.7 % on the grid step.)
func TestSlicerGridStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s, err := NewSlicer(SlicerOptions{Length: 4800 * time.Millisecond, Hop: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var jit []float64
	for i := range 200 {
		at := time.Duration(i)*100*time.Millisecond + time.Duration((rng.Float64()*2-1)*10*float64(time.Millisecond))
		if w, _ := s.Push(frame.Frame{Seq: i, Time: at, W: 1, H: 1, Pix: []float64{0}}); w != nil {
			jit = append(jit, math.Abs(w.Dt/0.1-1))
		}
	}
	if len(jit) == 0 || slicesMax(jit) > 0.003 {
		t.Errorf("jittered stamps: steps off the 100 ms grid by up to %.3g (%d windows), want ≤ 0.3 %%", slicesMax(jit), len(jit))
	}

	// A pendulum's latent, γ1 = 0.08, γ0 = 4.0016, through a sender that
	// dropped one picture in fifty, binned by 2; each window's (γ1, γ0)
	// fitted on its step. The bins break at a lost picture as the
	// Slicer does at bin 1, so no window spans one.
	const g1, g0 = 0.08, 4.0016
	wd := math.Sqrt(g0 - g1*g1/4)
	z := func(t time.Duration) float64 { s := t.Seconds(); return math.Exp(-g1/2*s) * math.Cos(wd*s) }
	s, _ = NewSlicer(SlicerOptions{Length: 4800 * time.Millisecond, Hop: time.Second})
	b := NewBinner(2)
	var at time.Duration
	var worst, worstMedian float64
	n := 0
	for i := range 3000 {
		at += 50 * time.Millisecond
		if rng.IntN(50) == 0 {
			at += 50 * time.Millisecond // a picture the sender dropped
		}
		bf, ok := b.Push(frame.Frame{Seq: i, Time: at, W: 1, H: 1, Pix: []float64{z(at)}})
		if !ok {
			continue
		}
		w, _ := s.Push(bf)
		if w == nil {
			continue
		}
		n++
		lat := make([]float64, len(w.Frames))
		steps := make([]float64, 0, len(w.Frames))
		for k, f := range w.Frames {
			lat[k] = f.Pix[0]
			if k > 0 {
				steps = append(steps, (f.Time - w.Frames[k-1].Time).Seconds())
			}
		}
		slices.Sort(steps)
		for _, c := range []struct {
			dt    float64
			worst *float64
		}{{w.Dt, &worst}, {steps[len(steps)/2], &worstMedian}} {
			fit, err := estimator.FitODE([][]float64{lat}, c.dt, estimator.NoOffset)
			if err != nil {
				t.Fatal(err)
			}
			*c.worst = max(*c.worst, math.Abs(fit.Gamma0/g0-1))
		}
	}
	t.Logf("a sender dropping 1 picture in 50, bin 2, %d windows: γ0 off by up to %.2f %% on the grid step, %.2f %% on the median step", n, 100*worst, 100*worstMedian)
	if n == 0 || worst > 0.01 {
		t.Errorf("γ0 off by up to %.2f %% on the windows' step, want ≤ 1 %%", 100*worst)
	}
}

func slicesMax(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	return m
}
