package sim

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
)

// coverageOf recovers the object's coverage a = (F − B)/(O − B) from a
// frame F (8-bit when q, else float) of a structure with a flat surface
// O over the background B.
func coverageOf(r *structRender, f []float64, q []uint8) []float64 {
	o := r.s.Surface.Mean
	if q != nil {
		o = float64(quantize8(o)) / 255 // the object's level as recorded
	}
	a := make([]float64, len(r.bg))
	for i, b := range r.bg {
		v := 0.0
		if q != nil {
			v = float64(q[i]) / 255
		} else {
			v = f[i]
		}
		a[i] = (v - b) / (o - b)
	}
	return a
}

// frameAt renders the noise-free frame of s at displacement d, as float
// values and as the 8-bit image RenderStructure would make of them.
func frameAt(s Structure, d float64) (*structRender, []float64, []uint8) {
	s = s.WithDefaults()
	r := newStructRender(s, []float64{d})
	buf, tmp := make([]float64, s.W*s.H), make([]float64, s.W*s.H)
	r.frameFloat(buf, tmp, d)
	img := r.quantize(buf, 0)
	return r, buf, img.Pix
}

// centroid returns the coverage-weighted mean of u·(pixel centre) over the
// pixels in the window.
func centroid(a []float64, w int, ux, uy float64, in func(i, j int) bool) float64 {
	var m, s float64
	for k, v := range a {
		i, j := k%w, k/w
		if in != nil && !in(i, j) {
			continue
		}
		m += v
		s += v * (ux*(float64(i)+0.5) + uy*(float64(j)+0.5))
	}
	return s / m
}

// TestStructureSubPixelCentroid checks that the rendering is exact for
// sub-pixel motion: the centroid of the object's coverage, recovered from
// the rendered frame as (F − B)/(O − B), moves by the displacement along
// the direction of motion, in the float frame (to 0.2 %) and in the 8-bit
// frame over the textured background (to 2 % of d: the block's 0.034 px
// vertical component at 200° is near what 8 bits resolve along a 48 px
// edge).
func TestStructureSubPixelCentroid(t *testing.T) {
	base := Structure{Duration: 1, Noise: Off}
	all := func(i, j int) bool { return true }
	type axis struct {
		name   string
		ux, uy float64
		in     func(i, j int) bool
	}
	// The block's suspension line is kept out of the window: below the
	// square's top edge for the x centroid (the cropped square still moves
	// rigidly in x), beside the line for the y centroid.
	top := DefaultStructureH/2 - DefaultStructureH/5/2 // 96
	blockX := func(i, j int) bool { return j >= top+2 }
	blockY := func(i, j int) bool { return math.Abs(float64(i)+0.5-DefaultStructureW/2) > 4 }
	for _, tc := range []struct {
		obj  ObjectKind
		dir  float64
		axes []axis
	}{
		{ObjectBlock, 0, []axis{{"x", 1, 0, blockX}}},
		{ObjectBlock, 90, []axis{{"y", 0, 1, blockY}}},
		{ObjectBlock, 30, []axis{{"x", 1, 0, blockX}, {"y", 0, 1, blockY}}},
		{ObjectBlock, 200, []axis{{"x", 1, 0, blockX}, {"y", 0, 1, blockY}}},
		{ObjectCable, 90, []axis{{"u", 0, 1, all}}},
		{ObjectCable, 0, []axis{{"u", 1, 0, all}}},
		{ObjectCable, 30, []axis{{"u", math.Cos(math.Pi / 6), math.Sin(math.Pi / 6), all}}},
		{ObjectCable, 135, []axis{{"u", -math.Sqrt2 / 2, math.Sqrt2 / 2, all}}},
	} {
		s := base
		s.Object, s.Direction = tc.obj, Deg(tc.dir)
		su, cu := math.Sincos(tc.dir * math.Pi / 180)
		r0, f0, q0 := frameAt(s, 0)
		for _, d := range []float64{0.1, 0.3, 1} {
			_, fd, qd := frameAt(s, d)
			for _, ax := range tc.axes {
				want := d * (ax.ux*cu + ax.uy*su) // the displacement's component
				for _, eight := range []bool{false, true} {
					var a0, ad []float64
					tol := 0.002
					if eight {
						a0, ad = coverageOf(r0, nil, q0), coverageOf(r0, nil, qd)
						tol = 0.02
					} else {
						a0, ad = coverageOf(r0, f0, nil), coverageOf(r0, fd, nil)
					}
					got := centroid(ad, r0.w, ax.ux, ax.uy, ax.in) - centroid(a0, r0.w, ax.ux, ax.uy, ax.in)
					if math.Abs(got-want) > tol*d {
						t.Errorf("%s at %v°, d = %v px, 8-bit %v: centroid along %s moved %.5f px, want %.5f (±%v %% of d)",
							tc.obj, tc.dir, d, eight, ax.name, got, want, tol*100)
					} else {
						t.Logf("%s at %v°, d = %v px, 8-bit %v: centroid along %s moved %.5f px, want %.5f (error %.3f %%)",
							tc.obj, tc.dir, d, eight, ax.name, got, want, 100*math.Abs(got-want)/d)
					}
				}
			}
		}
	}
}

// TestStructureBeamEdge checks the beam's edge: the area the beam gains
// is d times the edge's length in the frame (to 0.2 % in float, 2 % in 8
// bits), at several directions.
func TestStructureBeamEdge(t *testing.T) {
	for _, dir := range []float64{90, 0, 30, 250} {
		// A dark flat beam of an exact 8-bit level, so that (F − B)/(O − B)
		// is exact in fully covered pixels and well conditioned
		// over the whole textured background.
		s := Structure{Object: ObjectBeam, Duration: 1, Noise: Off, Direction: Deg(dir), Surface: Texture{Mean: 26.0 / 255, Contrast: Off}}
		su, cu := math.Sincos(dir * math.Pi / 180)
		// The edge through the frame centre, perpendicular to u, crosses
		// the 320×240 frame over this length.
		L := math.Min(DefaultStructureW/math.Abs(su), DefaultStructureH/math.Abs(cu))
		r0, f0, q0 := frameAt(s, 0)
		for _, d := range []float64{0.1, 0.3, 1} {
			_, fd, qd := frameAt(s, d)
			for _, eight := range []bool{false, true} {
				a0, ad, tol := coverageOf(r0, f0, nil), coverageOf(r0, fd, nil), 0.002
				if eight {
					a0, ad, tol = coverageOf(r0, nil, q0), coverageOf(r0, nil, qd), 0.02
				}
				gain := 0.0
				for i := range ad {
					gain += ad[i] - a0[i]
				}
				// The beam is on the +u side, so moving by +d loses area.
				if got := -gain / L; math.Abs(got-d) > tol*d {
					t.Errorf("beam at %v°, d = %v px, 8-bit %v: edge moved %.5f px, want %v (±%v %%)", dir, d, eight, got, d, 100*tol)
				}
			}
		}
	}
}

// TestStructureTextureMoves checks that the beam's own texture moves with
// it and the background does not: for an integer displacement the frame
// is the still frame shifted by that many pixels on the beam side, and
// unchanged away from it.
func TestStructureTextureMoves(t *testing.T) {
	s := Structure{Object: ObjectBeam, Duration: 1, Noise: Off, Direction: Deg(0)}
	r, f0, _ := frameAt(s, 0)
	_, f2, _ := frameAt(s, 2)
	w := r.w
	for j := 0; j < r.h; j++ {
		for i := 0; i < w; i++ {
			switch {
			case i >= w/2+4: // beam side, far from the edge
				if math.Abs(f2[j*w+i]-f0[j*w+i-2]) > 1e-12 {
					t.Fatalf("beam pixel (%d,%d) is %v, the still frame 2 px to the left is %v", i, j, f2[j*w+i], f0[j*w+i-2])
				}
			case i < w/2-1:
				if f2[j*w+i] != f0[j*w+i] || f0[j*w+i] != r.bg[j*w+i] {
					t.Fatalf("background pixel (%d,%d) changed: %v, %v", i, j, f0[j*w+i], f2[j*w+i])
				}
			}
		}
	}
	// The surface has texture: its pixels are not all one value.
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := 0; j < r.h; j++ {
		v := f0[j*w+w-10]
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi-lo < 0.05 {
		t.Errorf("beam surface spans %v..%v, want a texture", lo, hi)
	}
}

// TestStructureMastBends checks the mast: near the tip its centroid moves
// by d·φ(ξ) (φ the cantilever shape), near the base hardly at all.
func TestStructureMastBends(t *testing.T) {
	s := Structure{Object: ObjectMast, Duration: 1, Noise: Off}
	r0, f0, _ := frameAt(s, 0)
	const d = 0.5
	_, fd, _ := frameAt(s, d)
	a0, ad := coverageOf(r0, f0, nil), coverageOf(r0, fd, nil)
	// Geometry of paintMast for a vertical mast in a 240 px high frame.
	ext := float64(r0.h) / 2
	rBase, rTip := ext+2, -0.6*ext
	for _, rows := range [][2]int{{52, 62}, {200, 240}} {
		in := func(i, j int) bool { return j >= rows[0] && j < rows[1] }
		got := centroid(ad, r0.w, 1, 0, in) - centroid(a0, r0.w, 1, 0, in)
		want := 0.0
		for j := rows[0]; j < rows[1]; j++ {
			rr := float64(j) + 0.5 - r0.cy
			want += d * mastShape((rBase-rr)/(rBase-rTip)) / float64(rows[1]-rows[0])
		}
		if math.Abs(got-want) > 0.01*d {
			t.Errorf("mast rows %v: centroid moved %.5f px, want %.5f", rows, got, want)
		}
	}
}

// TestStructureStill: with A = 0 (or no modes) and no noise every frame is
// the same; with noise, frames differ only by the noise.
func TestStructureStill(t *testing.T) {
	ctx := context.Background()
	for _, obj := range []ObjectKind{ObjectBlock, ObjectCable, ObjectBeam, ObjectMast} {
		for _, modes := range [][]Mode{nil, {{Fn: 2, Zeta: 0.01, AmplitudePx: 0}}} {
			fs, d, err := RenderStructure(ctx, Structure{Object: obj, Duration: 0.3, Noise: Off, Modes: modes})
			if err != nil {
				t.Fatal(err)
			}
			for k := range fs {
				if d[k] != 0 {
					t.Fatalf("%s: d[%d] = %v", obj, k, d[k])
				}
				if !bytes.Equal(fs[k].Pix, fs[0].Pix) {
					t.Fatalf("%s, modes %v: frame %d differs from frame 0", obj, modes, k)
				}
			}
		}
	}
	fs, _, err := RenderStructure(ctx, Structure{Duration: 0.3, Modes: []Mode{{Fn: 2, AmplitudePx: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	still, _, _ := RenderStructure(ctx, Structure{Duration: 0.3, Noise: Off})
	var sum, sum2, n float64
	for k := range fs {
		if k > 0 && bytes.Equal(fs[k].Pix, fs[0].Pix) {
			t.Errorf("noisy frame %d equals frame 0", k)
		}
		for i, v := range fs[k].Pix {
			e := float64(v) - float64(still[0].Pix[i])
			sum, sum2, n = sum+e, sum2+e*e, n+1
		}
	}
	// 1 % of 255 is 2.55 gray levels (plus quantisation, 1/12).
	if mean, sd := sum/n, math.Sqrt(sum2/n); math.Abs(mean) > 0.05 || math.Abs(sd-math.Sqrt(2.55*2.55+1.0/12)) > 0.1 {
		t.Errorf("noise: mean %.3f, rms %.3f gray levels; want 0 and ≈ 2.57", mean, sd)
	}
}

// TestStructureDeterministic: the same scene gives byte-identical frames
// whatever the number of workers; another seed changes texture and noise.
func TestStructureDeterministic(t *testing.T) {
	ctx := context.Background()
	s := Structure{Object: ObjectBeam, Duration: 0.5, Seed: 7, Blur: 0.8, Direction: Deg(70),
		Modes: []Mode{{Fn: 1.5, Zeta: 0.02, AmplitudePx: 0.7}, {Fn: 4, Zeta: 0.01, AmplitudePx: 0.2, Phase: 1}}}
	a, da, err := RenderStructure(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, db, err := RenderStructure(ctx, s)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 15 || len(b) != len(a) {
		t.Fatalf("%d and %d frames, want 15", len(a), len(b))
	}
	for k := range a {
		if !bytes.Equal(a[k].Pix, b[k].Pix) || da[k] != db[k] {
			t.Fatalf("frame %d differs between runs", k)
		}
	}
	s.Seed = 8
	c, _, _ := RenderStructure(ctx, s)
	if bytes.Equal(a[0].Pix, c[0].Pix) {
		t.Error("seeds 7 and 8 gave the same frame")
	}
	// Textures and noise do not depend on the motion: two clips that
	// differ only in amplitude are identical where d = 0 (frame 0 here).
	s.Modes = []Mode{{Fn: 2, AmplitudePx: 0.3, Phase: math.Pi / 2}}
	p, _, _ := RenderStructure(ctx, s)
	s.Modes[0].AmplitudePx = 5
	q, _, _ := RenderStructure(ctx, s)
	if !bytes.Equal(p[0].Pix, q[0].Pix) || bytes.Equal(p[1].Pix, q[1].Pix) {
		t.Error("amplitudes 0.3 and 5 px: frame 0 differs or frame 1 does not")
	}
}

// TestStructureDisplacement checks d(t) against the closed form and the
// ODE, and the ground truth of a mode.
func TestStructureDisplacement(t *testing.T) {
	m := Mode{Fn: 2, Zeta: 0.01, AmplitudePx: 1, Phase: 0.3}
	g1, g0 := m.Gammas()
	w := 4 * math.Pi
	if math.Abs(g0-w*w) > 1e-12 || math.Abs(g1-0.02*w) > 1e-15 || math.Abs(g0-157.91367) > 1e-4 {
		t.Errorf("Gammas = %v, %v; want 0.02·4π, (4π)²", g1, g0)
	}
	s := Structure{Duration: 2, FPS: 100, Modes: []Mode{m}}
	tt := s.Times()
	d := s.Displacement(tt)
	if len(d) != 200 || d[0] != math.Cos(0.3) {
		t.Fatalf("%d samples, d(0) = %v; want 200, cos 0.3", len(d), d[0])
	}
	// Second differences: d″ + γ1 d′ + γ0 d ≈ 0.
	h := 1e-4
	for _, t0 := range []float64{0.1, 0.77, 1.9} {
		dd := func(x float64) float64 { return s.Displacement([]float64{x})[0] }
		d2 := (dd(t0+h) - 2*dd(t0) + dd(t0-h)) / (h * h)
		d1 := (dd(t0+h) - dd(t0-h)) / (2 * h)
		if res := d2 + g1*d1 + g0*dd(t0); math.Abs(res) > 1e-3*g0 {
			t.Errorf("ODE residual %v at t = %v", res, t0)
		}
	}
	// Modes add.
	s.Modes = append(s.Modes, Mode{Fn: 7, Zeta: 0.5, AmplitudePx: -0.2})
	d2 := s.Displacement(tt)
	for k := range d2 {
		if want := d[k] + s.Modes[1].At(tt[k]); math.Abs(d2[k]-want) > 1e-15 {
			t.Fatalf("two modes: d[%d] = %v, want %v", k, d2[k], want)
		}
	}
	if s.Excitation = "forced"; s.Displacement(tt) != nil {
		t.Error("unknown excitation gave a displacement")
	}
	tr := Structure{Duration: 1, Modes: []Mode{m}}.Truth()
	if tr.Gamma0 == nil || *tr.Gamma0 != g0 || *tr.Gamma1 != g1 || tr.Frames != 30 || tr.W != 320 || tr.Object != ObjectBlock ||
		tr.DirectionDeg != 0 || tr.Noise != DefaultNoise || tr.Modes[0].DampedHz != m.DampedHz() {
		t.Errorf("Truth = %+v", tr)
	}
	if tr := (Structure{Object: ObjectCable, Duration: 1, Noise: Off}).Truth(); tr.DirectionDeg != 90 || tr.Noise != 0 || tr.Gamma0 != nil || tr.SizePx != 3 {
		t.Errorf("cable Truth = %+v", tr)
	}
}

func TestStructureValidate(t *testing.T) {
	ok := Structure{Duration: 1, Modes: []Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Structure)
	}{
		{"W", func(s *Structure) { s.W = 8 }},
		{"H", func(s *Structure) { s.H = 5000 }},
		{"FPS", func(s *Structure) { s.FPS = -1 }},
		{"FPS", func(s *Structure) { s.FPS = math.NaN() }},
		{"Duration", func(s *Structure) { s.Duration = 0.05 }},
		{"Duration", func(s *Structure) { s.Duration = math.Inf(1) }},
		{"Duration", func(s *Structure) { s.Duration = 1e6 }},
		{"Object", func(s *Structure) { s.Object = "bridge" }},
		{"Excitation", func(s *Structure) { s.Excitation = "forced" }},
		{"Size", func(s *Structure) { s.Size = -2 }},
		{"Size", func(s *Structure) { s.Size = 200 }},
		{"Size", func(s *Structure) { s.Object, s.Size = ObjectBeam, 3 }},
		{"Size", func(s *Structure) { s.Object, s.Size = ObjectCable, 0.2 }},
		{"Direction", func(s *Structure) { s.Direction = Deg(math.NaN()) }},
		{"Modes[0].Fn", func(s *Structure) { s.Modes[0].Fn = 0 }},
		{"Modes[0].Fn", func(s *Structure) { s.Modes[0].Fn = 15 }},
		{"Modes[0].Zeta", func(s *Structure) { s.Modes[0].Zeta = 1 }},
		{"Modes[0].Zeta", func(s *Structure) { s.Modes[0].Zeta = -0.1 }},
		{"Modes[1].AmplitudePx", func(s *Structure) { s.Modes = append(s.Modes, Mode{Fn: 1, AmplitudePx: math.NaN()}) }},
		{"Modes[0].Phase", func(s *Structure) { s.Modes[0].Phase = math.Inf(-1) }},
		{"Modes", func(s *Structure) { s.Modes[0].AmplitudePx = 61 }},
		{"Noise", func(s *Structure) { s.Noise = 0.7 }},
		{"Blur", func(s *Structure) { s.Blur = -1 }},
		{"Background.Mean", func(s *Structure) { s.Background.Mean = 1.5 }},
		{"Background.Contrast", func(s *Structure) { s.Background.Contrast = 0.6 }},
		{"Surface.Scale", func(s *Structure) { s.Surface.Scale = 0.5 }},
		{"Surface.Mean", func(s *Structure) { s.Surface.Mean = -0.1 }},
	} {
		s := ok
		s.Modes = append([]Mode(nil), ok.Modes...)
		tc.edit(&s)
		err := s.Validate()
		var se *StructureError
		if !errors.Is(err, ErrInvalidScene) || !errors.As(err, &se) || se.Field != tc.field ||
			!strings.Contains(err.Error(), "Structure."+tc.field+" ") {
			t.Errorf("%s: got %v", tc.field, err)
		}
		if _, _, rerr := RenderStructure(context.Background(), s); !errors.Is(rerr, ErrInvalidScene) {
			t.Errorf("%s: RenderStructure gave %v", tc.field, rerr)
		}
	}
	// Off and the defaults are valid.
	for _, s := range []Structure{
		{Duration: 1, Noise: Off, Background: Texture{Contrast: Off}, Surface: Texture{Contrast: Off}},
		{Object: ObjectMast, Duration: 1, W: 17, H: 33, Direction: Deg(-45)},
		{Object: ObjectBeam, Duration: 1, FPS: 240, Modes: []Mode{{Fn: 100, Zeta: 0.9, AmplitudePx: 2}}},
	} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestStructureCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := RenderStructure(ctx, Structure{Duration: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestStructureTexture checks the background's statistics and that
// Off gives a flat background.
func TestStructureTexture(t *testing.T) {
	r, _, _ := frameAt(Structure{Duration: 1, Background: Texture{Mean: 0.4, Contrast: 0.1, Scale: 3}}, 0)
	var m, s2 float64
	for _, v := range r.bg {
		m += v
	}
	m /= float64(len(r.bg))
	for _, v := range r.bg {
		s2 += (v - m) * (v - m)
	}
	if sd := math.Sqrt(s2 / float64(len(r.bg))); math.Abs(m-0.4) > 1e-9 || math.Abs(sd-0.1) > 1e-9 {
		t.Errorf("background mean %v sd %v, want 0.4, 0.1", m, sd)
	}
	r, _, _ = frameAt(Structure{Duration: 1, Background: Texture{Mean: 0.5, Contrast: Off}}, 0)
	for _, v := range r.bg {
		if v != 0.5 {
			t.Fatalf("flat background has %v", v)
		}
	}
}

// TestHalfPlaneArea checks the analytic coverage against dense sampling.
func TestHalfPlaneArea(t *testing.T) {
	const n = 400
	for _, th := range []float64{0, 0.3, 1, math.Pi / 4, 2, 3, 4.5, -0.7} {
		nx, ny := math.Cos(th), math.Sin(th)
		for _, c := range []float64{-1.5, -0.3, 0, 0.1, 0.5, 0.77, 1.2, 2} {
			in := 0
			for a := 0; a < n; a++ {
				for b := 0; b < n; b++ {
					if nx*(float64(a)+0.5)/n+ny*(float64(b)+0.5)/n <= c {
						in++
					}
				}
			}
			if got, want := halfPlaneArea(nx, ny, c), float64(in)/(n*n); math.Abs(got-want) > 0.006 {
				t.Errorf("halfPlaneArea(%.3f, %.3f, %v) = %v, sampled %v", nx, ny, c, got, want)
			}
		}
	}
}

// BenchmarkRenderStructure renders 600 frames (20 s at 30 fps) of the
// default 320×240 block with a 1 px mode.
func BenchmarkRenderStructure(b *testing.B) {
	s := Structure{Duration: 20, Modes: []Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}}}
	for i := 0; i < b.N; i++ {
		if _, _, err := RenderStructure(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}
