package tracker

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/estimator"
)

// scene draws a dark disc of radius rad on a textured background, its
// centre at (cx, y(t)), with Gaussian pixel noise.
func scene(w, h int, rad, cx float64, ys []float64, noise float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	bg := make([]float64, w*h)
	for j := range bg {
		x, y := float64(j%w), float64(j/w)
		bg[j] = 0.6 + 0.1*math.Sin(0.7*x)*math.Cos(0.3*y)
	}
	frames := make([][]float64, len(ys))
	for i, cy := range ys {
		f := make([]float64, w*h)
		for j := range f {
			x, y := float64(j%w)+0.5, float64(j/w)+0.5
			d := math.Hypot(x-cx, y-cy)
			// Anti-aliased edge: coverage falls over one pixel.
			cover := math.Max(0, math.Min(1, rad+0.5-d))
			f[j] = bg[j]*(1-cover) + 0.1*cover + noise*rng.NormFloat64()
		}
		frames[i] = f
	}
	return frames
}

// damped is y(t) = y0 + A e^{−γ1 t/2} cos(ω t), ω² = γ0 − γ1²/4.
func damped(n int, dt, y0, amp, g1, g0 float64) []float64 {
	w := math.Sqrt(g0 - g1*g1/4)
	ys := make([]float64, n)
	for i := range ys {
		t := float64(i) * dt
		ys[i] = y0 + amp*math.Exp(-g1*t/2)*math.Cos(w*t)
	}
	return ys
}

// A small object that crosses most of its region — the case a linear
// readout of pixels bends — is followed with a latent linear in its
// position, and the ODE fitted to that latent recovers (γ1, γ0).
func TestFollowSmallObjectFarTravel(t *testing.T) {
	const w, h, dt = 30, 140, 1.0 / 30
	g1, g0 := 1.1, 38.0
	ys := damped(225, dt, 70, 50, g1, g0)
	frames := scene(w, h, 3, 15, ys, 0.01, 1)
	clips := []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}
	paths, err := Follow(context.Background(), clips, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := paths[0]
	if math.Abs(p.Axis.Y) < 0.99 {
		t.Errorf("axis %+v, want vertical", p.Axis)
	}
	// Linear in the true position: regress the latent on y.
	z := p.Latents()[0]
	var my, mz float64
	for i := range z {
		my += ys[i]
		mz += z[i]
	}
	my /= float64(len(z))
	mz /= float64(len(z))
	var syy, szz, syz float64
	for i := range z {
		syy += (ys[i] - my) * (ys[i] - my)
		szz += (z[i] - mz) * (z[i] - mz)
		syz += (ys[i] - my) * (z[i] - mz)
	}
	slope := syz / syy
	resid := math.Sqrt(math.Max(0, szz-syz*syz/syy) / float64(len(z)))
	if math.Abs(math.Abs(slope)-1) > 0.01 || resid > 0.1 {
		t.Errorf("latent vs position: slope %.4f (want ±1), rms residual %.3f px (want < 0.1)", slope, resid)
	}
	p0, _ := estimator.LookupPreset(estimator.DefaultPreset)
	r, err := estimator.FitLatents(context.Background(), p.Name(), p.Latents(), [][][]float64{frames}, dt, p0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Gamma0-g0)/g0 > 0.01 || math.Abs(r.Gamma1-g1) > 0.05 {
		t.Errorf("fit of the tracked latent: γ0 %.3f γ1 %.4f, want %.1f, %.2f", r.Gamma0, r.Gamma1, g0, g1)
	}
	if r.Readout != p.Name() || r.Uncertainty == nil || r.Uncertainty.Bootstrap == nil {
		t.Errorf("readout %q, uncertainty %+v", r.Readout, r.Uncertainty)
	}
}

// A second clip finds the object anew wherever it starts.
func TestFollowSecondClip(t *testing.T) {
	const w, h, dt = 30, 100, 1.0 / 30
	a := scene(w, h, 3, 15, damped(90, dt, 50, 30, 0.5, 20), 0.01, 2)
	b := scene(w, h, 3, 15, damped(90, dt, 50, -20, 0.5, 20), 0.01, 3)
	clips := []estimator.Clip{{W: w, H: h, Frames: a, Dt: dt}, {W: w, H: h, Frames: b, Dt: dt}}
	paths, err := Follow(context.Background(), clips, Options{Objects: 1})
	if err != nil {
		t.Fatal(err)
	}
	z := paths[0].Latents()
	// Clip b starts 50 px from clip a's start, on the other side.
	if d := math.Abs(z[0][0] - z[1][0]); math.Abs(d-50) > 1 {
		t.Errorf("clip starts %.2f px apart, want 50", d)
	}
}

// Nothing to follow, or a follow that fails, is an error, never a panic.
func TestFollowErrors(t *testing.T) {
	const w, h, dt = 20, 20, 0.05
	still := scene(w, h, 0, 10, make([]float64, 40), 0, 1)
	if _, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: still, Dt: dt}}, Options{}); !errors.Is(err, ErrNoObject) && !errors.Is(err, ErrStill) {
		t.Errorf("still scene: %v", err)
	}
	// The view goes blank halfway (a lens cap, a dropped feed): lost.
	ys := damped(60, dt, 10, 5, 0.5, 20)
	fr := scene(w, h, 3, 10, ys, 0.005, 4)
	for i := 30; i < len(fr); i++ {
		for j := range fr[i] {
			fr[i][j] = 0.5
		}
	}
	// The path ends where the object vanished, less the frames before
	// it that a vanishing object drags.
	if paths, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: fr, Dt: dt}}, Options{Objects: 1}); err != nil {
		t.Errorf("object followed for 30 frames: %v", err)
	} else if p := paths[0]; p.First[0] != 0 || len(p.Pos[0]) != 30-lossMargin || len(p.Latents()[0]) != len(p.Pos[0]) {
		t.Errorf("vanishing object: followed from frame %d through %d frames, want 0 and %d", p.First[0], len(p.Pos[0]), 30-lossMargin)
	}
	// Gone after a handful of frames: lost.
	for i := 6; i < 30; i++ {
		copy(fr[i], fr[30])
	}
	if _, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: fr, Dt: dt}}, Options{}); !errors.Is(err, ErrLost) {
		t.Errorf("object gone after 6 frames: %v", err)
	}
	bad := []estimator.Clip{{W: w, H: h, Frames: [][]float64{make([]float64, 5)}, Dt: dt}}
	if _, err := Follow(context.Background(), bad, Options{}); err == nil {
		t.Error("short frame accepted")
	}
	if _, err := Follow(context.Background(), nil, Options{}); err == nil {
		t.Error("no clips accepted")
	}
}

// A prediction far off the frame searches from the nearest place the
// template fits: no index leaves the frame.
func TestSearchOffFrame(t *testing.T) {
	const w, h = 20, 30
	f := scene(w, h, 3, 10, []float64{26}, 0, 1)[0]
	tm := newTemplate(f, w, Box{5, 21, 10, 9}, nil)
	if tm == nil {
		t.Fatal("flat template")
	}
	for _, p := range [][2]int{{-50, -50}, {100, 100}, {5, 1000}, {-3, 21}} {
		q, s := tm.search(f, w, h, p[0], p[1], 2)
		if q.X < 0 || q.Y < 0 || q.X > w-10 || q.Y > h-9 || math.IsNaN(s) {
			t.Errorf("prediction %v: found %+v score %.3f", p, q, s)
		}
	}
}

// pendulum draws a dark bob of radius rad at the end of a rod of length
// l from the pivot (cx, cy), at angles th (radians, 0 straight down), on
// a white background.
func pendulum(w, h int, cx, cy, l, rad float64, th []float64) [][]float64 {
	frames := make([][]float64, len(th))
	for i, a := range th {
		bx, by := cx+l*math.Sin(a), cy+l*math.Cos(a)
		f := make([]float64, w*h)
		for j := range f {
			x, y := float64(j%w)+0.5, float64(j/w)+0.5
			// Distance to the rod segment and to the bob; coverage falls
			// over one pixel.
			ux, uy := bx-cx, by-cy
			s := math.Max(0, math.Min(1, ((x-cx)*ux+(y-cy)*uy)/(ux*ux+uy*uy)))
			dRod := math.Hypot(x-cx-s*ux, y-cy-s*uy) - 0.7
			dBob := math.Hypot(x-bx, y-by) - rad
			cover := math.Max(0, math.Min(1, 0.5-math.Min(dRod, dBob)))
			f[j] = 1 - 0.9*cover
		}
		frames[i] = f
	}
	return frames
}

// A swinging bob on a rod: the template is the bob alone (the rod is cut
// off, so the template does not turn), the path is an arc about the
// pivot, and the latent is the arc length — linear in the angle, where a
// horizontal displacement would bend with its sine and bias γ0.
func TestFollowPendulumArc(t *testing.T) {
	const w, h, dt = 64, 64, 0.05
	const l = 27.8
	g1, g0 := 0.08, 4.0
	deg := damped(120, dt, 0, 50, g1, g0)
	th := make([]float64, len(deg))
	for i, d := range deg {
		th[i] = d * math.Pi / 180
	}
	frames := pendulum(w, h, 32, 20, l, 2.8, th)
	clips := []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}
	paths, err := Follow(context.Background(), clips, Options{Objects: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := paths[0]
	if math.Abs(p.Radius-l)/l > 0.03 || p.Box.W > 12 || p.Box.H > 12 {
		t.Fatalf("radius %.2f (rod %.1f), template %v: want the bob alone on an arc", p.Radius, l, p.Box)
	}
	z := p.Latents()[0]
	var st, sz, stt, szz, stz float64
	for i := range z {
		st, sz = st+th[i], sz+z[i]
		stt, szz, stz = stt+th[i]*th[i], szz+z[i]*z[i], stz+th[i]*z[i]
	}
	n := float64(len(z))
	ctt, czz, ctz := stt-st*st/n, szz-sz*sz/n, stz-st*sz/n
	if r2 := ctz * ctz / (ctt * czz); r2 < 0.9999 {
		t.Errorf("latent vs angle: R² %.6f, want linear (≥ 0.9999)", r2)
	}
	p0, _ := estimator.LookupPreset(estimator.DefaultPreset)
	r, err := estimator.FitLatents(context.Background(), p.Name(), p.Latents(), nil, dt, p0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Gamma0-g0)/g0 > 0.005 || math.Abs(r.Gamma1-g1) > 0.004 {
		t.Errorf("fit of the tracked arc: γ0 %.4f γ1 %.4f, want %.1f, %.2f", r.Gamma0, r.Gamma1, g0, g1)
	}
}

// An object hidden for a while by another — a dark square parked where
// it passes — is followed up to where it disappears and found again in
// a later seed frame; the path kept is the longest run, it never jumps
// onto the square.
func TestFollowOcclusion(t *testing.T) {
	const w, h, dt = 30, 100, 1.0 / 30
	ys := damped(150, dt, 50, 30, 0.5, 20)
	frames := scene(w, h, 3, 15, ys, 0.005, 5)
	// From frame 100 on, a square covers where the object passes its
	// equilibrium.
	for i := 100; i < len(frames); i++ {
		for y := 42; y < 58; y++ {
			for x := 8; x < 22; x++ {
				frames[i][y*w+x] = 0.1
			}
		}
	}
	paths, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := paths[0]; p.First[0] != 0 || len(p.Pos[0]) > 100 || len(p.Pos[0]) < 90 {
		t.Errorf("%s: followed from frame %d through %d frames, want from 0 up to the square (100)", p.Name(), p.First[0], len(p.Pos[0]))
	}
	for _, p := range paths {
		for i, q := range p.Pos[0] {
			k := p.First[0] + i
			if d := math.Abs(q.Y - (ys[k] - ys[p.First[0]]) - p.Pos[0][0].Y); d > 1 {
				t.Errorf("%s: frame %d at y %.2f, %.2f px off the object's path", p.Name(), k, q.Y, d)
				break
			}
		}
	}
}

// ncc's running sums give the correlation the pixels themselves give, for
// a masked template (several runs a row) at every corner of a region.
func TestNCCFromRunningSums(t *testing.T) {
	const w, h = 23, 17
	rng := rand.New(rand.NewPCG(8, 1))
	f := make([]float64, w*h)
	for i := range f {
		f[i] = rng.Float64()
	}
	b := Box{X: 4, Y: 3, W: 7, H: 6}
	mask := make([]bool, b.W*b.H)
	for i := range mask {
		mask[i] = i%5 != 2 // holes: two or three runs a row
	}
	tm := newTemplate(f, w, b, mask)
	if tm == nil {
		t.Fatal("flat template")
	}
	tm.z.build(f, w, 2, 1, w, h)
	for y := 1; y+b.H <= h; y++ {
		for x := 2; x+b.W <= w; x++ {
			var sp, sp2, svp float64
			i := 0
			for r := range b.H {
				for c := range b.W {
					if !mask[r*b.W+c] {
						continue
					}
					p := f[(y+r)*w+x+c]
					sp, sp2, svp = sp+p, sp2+p*p, svp+tm.v[i]*p
					i++
				}
			}
			n := float64(len(tm.v))
			want := svp / (tm.norm * math.Sqrt(sp2-sp*sp/n))
			if got := tm.ncc(f, w, x, y); math.Abs(got-want) > 1e-12 {
				t.Fatalf("corner (%d, %d): ncc %.15f, from the pixels %.15f", x, y, got, want)
			}
		}
	}
}
