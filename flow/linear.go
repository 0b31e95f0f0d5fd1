package flow

import (
	"errors"
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
)

// ErrNoResponse reports a calibration in which no pixel follows the
// reading beyond its noise.
var ErrNoResponse = errors.New("flow: no pixel follows the reading")

// MinResponseT is the least t-statistic of a pixel's response to the
// reading for the pixel to be read by a Linear readout.
const MinResponseT = 4

// Linear is a frozen readout: a displacement read from one frame at a
// time as a weighted sum of its pixels' change from a reference,
//
//	z = Σ_p w_p·(I_p − I₀_p),
//
// for records too long to hold (an ambient record of minutes): it is
// calibrated once on a clip's Reading and then costs one pass over the
// pixels a frame.
type Linear struct {
	W, H int
	// Ref is the reference frame I₀, the calibration frames' mean.
	Ref []float64
	// Weights are w, zero off the responding pixels.
	Weights []float64
	// Pixels is how many pixels respond (carry a weight).
	Pixels int
	// Dir is the calibrating reading's direction of motion.
	Dir [2]float64
}

// Calibrate fits a Linear readout to a clip and its reading z (Reading.Z,
// frame pixels along Dir). Each pixel's response a_p and noise s_p come
// from the regression of its change on z,
//
//	a_p = Σ_t ΔI_p(t)·z̃_t / Σ_t z̃_t²,  s_p² = mean_t (ΔI_p(t) − a_p z̃_t)²,
//
// z̃ = z − z̄; pixels whose response is MinResponseT times its standard
// error are read, weighed as Gauss–Markov would, w_p ∝ a_p/s_p². The
// weights are then made blind to a change of exposure — Σ w = 0 and
// Σ w·(I₀ − Ī₀) = 0, a brightness offset and a gain (a keyframe's step,
// an auto-exposure) — and scaled so that the responses read 1: Σ w a = 1.
func Calibrate(c estimator.Clip, r *Reading) (*Linear, error) {
	n, np := len(c.Frames), c.W*c.H
	if n < estimator.MinFrames || len(r.Z) != n {
		return nil, fmt.Errorf("flow: calibrate on %d frames with %d readings: %w", n, len(r.Z), ErrShort)
	}
	ref := make([]float64, np)
	for _, f := range c.Frames {
		for i, v := range f {
			ref[i] += v / float64(n)
		}
	}
	var zm float64
	for _, z := range r.Z {
		zm += z / float64(n)
	}
	zt := make([]float64, n)
	var szz float64
	for t, z := range r.Z {
		zt[t] = z - zm
		szz += zt[t] * zt[t]
	}
	if !(szz > 0) {
		return nil, ErrNoResponse
	}
	a, ss := make([]float64, np), make([]float64, np)
	for t, f := range c.Frames {
		for i, v := range f {
			a[i] += (v - ref[i]) * zt[t] / szz
		}
	}
	for t, f := range c.Frames {
		for i, v := range f {
			e := v - ref[i] - a[i]*zt[t]
			ss[i] += e * e / float64(n)
		}
	}
	l := &Linear{W: c.W, H: c.H, Ref: ref, Weights: make([]float64, np), Dir: r.Dir}
	var sel []int
	for i := range np {
		se := math.Sqrt(ss[i] / szz)
		if se > 0 && math.Abs(a[i]) >= MinResponseT*se {
			l.Weights[i] = a[i] / ss[i]
			sel = append(sel, i)
		}
	}
	if len(sel) < 3 {
		return nil, fmt.Errorf("%w (%d of %d pixels)", ErrNoResponse, len(sel), np)
	}
	l.Pixels = len(sel)
	// Project w off span{1, g}, g = I₀ − Ī₀ over the read pixels: solve
	// the 2×2 normal equations for (α, β) in w − α·1 − β·g.
	var gm float64
	for _, i := range sel {
		gm += ref[i] / float64(len(sel))
	}
	var s11, s1g, sgg, sw1, swg float64
	for _, i := range sel {
		g := ref[i] - gm
		s11++
		s1g += g
		sgg += g * g
		sw1 += l.Weights[i]
		swg += l.Weights[i] * g
	}
	if det := s11*sgg - s1g*s1g; det > 0 {
		alpha := (sw1*sgg - swg*s1g) / det
		beta := (swg*s11 - sw1*s1g) / det
		for _, i := range sel {
			l.Weights[i] -= alpha + beta*(ref[i]-gm)
		}
	}
	var gain float64
	for _, i := range sel {
		gain += l.Weights[i] * a[i]
	}
	if !(math.Abs(gain) > 0) {
		return nil, ErrNoResponse
	}
	for _, i := range sel {
		l.Weights[i] /= gain
	}
	return l, nil
}

// Read returns the displacement one frame shows, in the calibrating
// reading's units (frame pixels along Dir), up to a constant.
func (l *Linear) Read(pix []float64) float64 {
	var z float64
	for i, w := range l.Weights {
		if w != 0 {
			z += w * (pix[i] - l.Ref[i])
		}
	}
	return z
}

// confirm is how much of the next coarser bin's amplitude a bin's reading
// must reach for CalibrateAuto to read there.
const confirm = 0.85

// CalibrateAuto reads the clip at the finest bin — 1, 2, 4 or 8 frame
// pixels a side — whose reading's amplitude the next coarser bin confirms
// (within confirm), calibrates a Linear readout there, and folds it back
// onto the frame's own pixels: a bin's mean is linear in them, so
//
//	z = k·Σ_b w_b (B_b − B₀_b) = Σ_p (w_{b(p)}/k)·(I_p − I₀_p)
//
// for a bin of k² pixels, k·z_b in frame pixels. A linear readout of
// pixels is a displacement only while the motion is within a fraction of
// the image's correlation length; binning lengthens that, at the cost of
// the finer gradients (a 1 px rms sway read on 64×64 frames saturated, its
// largest swings read small). With no bin linear, the reading that explains the moving pixels best is used. The Reading returned is in
// frame pixels (Binned = k).
func CalibrateAuto(c estimator.Clip) (*Linear, *Reading, error) {
	// Every bin's reading, then the finest whose amplitude its next
	// coarser one confirms: a swing past a bin's linear range reads small
	// there (saturates), not large, so its amplitude grows with the bin
	// until the bins read it alike. A bin too coarse for the region leaves
	// a handful of pixels, none of them moving, and is not read.
	type reading struct {
		r    *Reading
		clip estimator.Clip
		k    int
		amp  float64 // frame px
	}
	var rs []reading
	var firstErr error
	b := c
	for k := 1; k <= 8; k *= 2 {
		if k > 1 {
			if b.W/2 <= 2*margin || b.H/2 <= 2*margin {
				break
			}
			b = bin2(b)
		}
		r, err := Read(b)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if r.Moving == 0 {
			continue
		}
		rs = append(rs, reading{r: r, clip: b, k: k, amp: r.Amplitude() * float64(k)})
	}
	if len(rs) == 0 {
		if firstErr == nil {
			firstErr = ErrNoResponse
		}
		return nil, nil, firstErr
	}
	pick := rs[len(rs)-1]
	for i := range len(rs) - 1 {
		if rs[i].amp >= confirm*rs[i+1].amp {
			pick = rs[i]
			break
		}
	}
	last, lastClip, lastK := pick.r, pick.clip, pick.k
	lb, err := Calibrate(lastClip, last)
	if err != nil {
		return nil, nil, err
	}
	k := lastK
	l := &Linear{W: c.W, H: c.H, Ref: make([]float64, c.W*c.H), Weights: make([]float64, c.W*c.H), Pixels: lb.Pixels * k * k, Dir: lb.Dir}
	for _, f := range c.Frames {
		for i, v := range f {
			l.Ref[i] += v / float64(len(c.Frames))
		}
	}
	for y := range lb.H * k {
		for x := range lb.W * k {
			l.Weights[y*c.W+x] = lb.Weights[(y/k)*lb.W+x/k] / float64(k)
		}
	}
	for t := range last.Z {
		last.Z[t] *= float64(k)
	}
	last.Noise *= float64(k)
	last.Binned = k
	return l, last, nil
}
