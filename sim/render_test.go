package sim

import (
	"bytes"
	"context"
	"errors"
	"image"
	"math"
	"strings"
	"testing"
)

func mustRender(t *testing.T, s Scene) ([]*image.Gray, []float64) {
	t.Helper()
	fs, z, err := Render(context.Background(), s)
	if err != nil {
		t.Fatalf("Render(%+v): %v", s, err)
	}
	return fs, z
}

func sameFrames(a, b []*image.Gray) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Rect != b[i].Rect || !bytes.Equal(a[i].Pix, b[i].Pix) {
			return false
		}
	}
	return true
}

func correlation(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func allNuisances() []Nuisance {
	ns := []Nuisance{{}}
	for _, k := range []NuisanceKind{NuisanceBackground, NuisanceClutter, NuisanceJitter, NuisanceBrightness} {
		for l := 1; l <= 3; l++ {
			ns = append(ns, Nuisance{k, l})
		}
	}
	return ns
}

func pendulumScene() Scene {
	g1, g0 := GroundTruth(RegimeUnderdamped)
	return Scene{System: SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, V0: 0, Duration: 2, Seed: 7}
}

func TestRenderShapesAndState(t *testing.T) {
	for _, sys := range []System{SystemPendulum, SystemIntensity, SystemScale} {
		s := Scene{System: sys, Gamma1: 5, Gamma0: 4, Z0: 0.4, V0: -2, Duration: 1.26, Size: 40}
		fs, z := mustRender(t, s)
		n := int(math.Round(1.26 * DefaultFPS(sys)))
		if len(fs) != n || len(z) != n {
			t.Fatalf("%s: %d frames, %d states, want %d", sys, len(fs), len(z), n)
		}
		want, _ := Solve(5, 4, 0.4, -2, s.Times())
		for k := range fs {
			if fs[k].Rect != image.Rect(0, 0, 40, 40) {
				t.Fatalf("%s: frame %d bounds %v", sys, k, fs[k].Rect)
			}
			if z[k] != want[k] {
				t.Fatalf("%s: z[%d] = %v, want %v", sys, k, z[k], want[k])
			}
		}
	}
}

func TestRenderDeterministic(t *testing.T) {
	base := pendulumScene()
	base.Duration = 1
	for _, sys := range []System{SystemPendulum, SystemIntensity, SystemScale} {
		for _, nz := range allNuisances() {
			s := base
			s.System, s.Nuisance = sys, nz
			if sys != SystemPendulum {
				s.Z0, s.V0 = 0.4, 3
			}
			a, _ := mustRender(t, s)
			b, _ := mustRender(t, s)
			if !sameFrames(a, b) {
				t.Errorf("%s %+v: same seed gave different frames", sys, nz)
			}
			usesRandom := nz.Kind != NuisanceNone || sys == SystemIntensity
			s.Seed++
			c, _ := mustRender(t, s)
			if usesRandom && sameFrames(a, c) {
				t.Errorf("%s %+v: different seeds gave identical frames", sys, nz)
			}
			if !usesRandom && !sameFrames(a, c) {
				t.Errorf("%s %+v: seed changed a scene without randomness", sys, nz)
			}
		}
	}
}

// darkCentroidX is the x centroid of the darkness (255 − value) of a frame.
func darkCentroidX(f *image.Gray) float64 {
	var sw, sx float64
	b := f.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			w := float64(255 - f.GrayAt(x, y).Y)
			sw += w
			sx += w * (float64(x) + 0.5)
		}
	}
	return sx / sw
}

func TestPendulumSide(t *testing.T) {
	for _, size := range []int{16, 64, 101} {
		for _, deg := range []float64{-60, -20, -3, 3, 20, 60} {
			s := Scene{System: SystemPendulum, Gamma0: 4, Z0: deg, Duration: 0.15, Size: size}
			fs, _ := mustRender(t, s)
			cx := darkCentroidX(fs[0])
			c := float64(size) / 2
			if deg > 0 && !(cx > c) || deg < 0 && !(cx < c) {
				t.Errorf("size %d, θ=%v°: dark centroid x = %.3f, centre %.1f", size, deg, cx, c)
			}
		}
	}
	// Hanging straight down: symmetric, bob below the centre.
	fs, _ := mustRender(t, Scene{System: SystemPendulum, Gamma0: 4, Duration: 0.15})
	if cx := darkCentroidX(fs[0]); math.Abs(cx-32) > 1e-9 {
		t.Errorf("θ=0: dark centroid x = %v, want 32", cx)
	}
	// The bob centre at θ = 90° is at x = 32 + 64/2.3 ≈ 59.8 on the centre row.
	fs, _ = mustRender(t, Scene{System: SystemPendulum, Gamma0: 4, Z0: 90, Duration: 0.15})
	if v := fs[0].GrayAt(59, 31).Y; v > 10 {
		t.Errorf("θ=90°: pixel (59,31) = %d, want the black bob", v)
	}
	if v := fs[0].GrayAt(32, 50).Y; v != 255 {
		t.Errorf("θ=90°: pixel (32,50) = %d, want white", v)
	}
}

// TestPendulumSmooth checks that the anti-aliased image is a continuous
// function of the angle: tiny angle changes give tiny pixel changes, and
// the total darkness moves smoothly.
func TestPendulumSmooth(t *testing.T) {
	o := &observer{system: SystemPendulum, size: 64}
	render := func(deg float64) []float64 {
		c := newCanvas(64)
		c.fill(1)
		o.draw(c, deg)
		return c.px
	}
	prev := render(10)
	for deg := 10.0; deg < 12; deg += 0.01 {
		cur := render(deg + 0.01)
		worst := 0.0
		for i := range cur {
			worst = math.Max(worst, math.Abs(cur[i]-prev[i]))
		}
		// The bob moves 0.01° ≈ 0.005 px: the coverage of any pixel changes
		// by at most about that much.
		if worst > 0.02 {
			t.Fatalf("θ %.2f→%.2f: max pixel change %.4f", deg, deg+0.01, worst)
		}
		prev = cur
	}
}

func TestIntensityTracksState(t *testing.T) {
	g1, g0 := GroundTruth(RegimeUnderdamped)
	s := Scene{System: SystemIntensity, Gamma1: g1, Gamma0: g0, Z0: 0.4, V0: -200, Duration: 6, Seed: 11}
	fs, z := mustRender(t, s)
	poly := randomPolygon(newRand(s.Seed, streamShape), 64).coverageMap(64)
	inside := 0
	means := make([]float64, len(fs))
	for k, f := range fs {
		sum := 0.0
		inside = 0
		for i, a := range poly {
			if a == 1 {
				sum += float64(f.Pix[i])
				inside++
			}
		}
		means[k] = sum / float64(inside)
	}
	if inside < 64*64/10 {
		t.Fatalf("polygon covers only %d pixels", inside)
	}
	if r := correlation(means, z); r < 0.999 {
		t.Errorf("correlation(mean gray, z) = %v", r)
	}
	lo, hi := 255.0, 0.0
	for _, m := range means {
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	if math.Abs(lo-0.2*255) > 1 || math.Abs(hi-255) > 1 {
		t.Errorf("gray range [%v, %v], want [51, 255]", lo, hi)
	}
	// Background stays black.
	for i, a := range poly {
		if a == 0 && fs[0].Pix[i] != 0 {
			t.Fatalf("background pixel %d is %d", i, fs[0].Pix[i])
		}
	}
}

func TestScaleTracksState(t *testing.T) {
	g1, g0 := GroundTruth(RegimeUnderdamped)
	for _, size := range []int{64, 33} {
		s := Scene{System: SystemScale, Gamma1: g1, Gamma0: g0, Z0: 0.4, V0: 200, Duration: 6, Size: size}
		fs, z := mustRender(t, s)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range z {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		var diff, zz []float64
		for k, f := range fs {
			// Only states whose half-disc radii are not clipped by the
			// 0.45·Size limit, where the area difference is exactly affine.
			if u := (z[k] - lo) / (hi - lo); math.Abs(2*u-1) > 0.8 {
				continue
			}
			d := 0.0
			for y := 0; y < size; y++ {
				for x := 0; x < size; x++ {
					v := float64(f.Pix[y*f.Stride+x])
					if 2*x+1 < size {
						d += v
					} else if 2*x+1 > size {
						d -= v
					}
				}
			}
			diff = append(diff, d)
			zz = append(zz, z[k])
		}
		if len(zz) < 10 {
			t.Fatalf("only %d unclipped frames", len(zz))
		}
		if r := correlation(diff, zz); r < 0.999 {
			t.Errorf("size %d: correlation(left−right area, z) = %v", size, r)
		}
	}
}

func TestRenderSetJointNormalisation(t *testing.T) {
	ctx := context.Background()
	// Both clips start at z = 0.4 but reach different ranges.
	a := Scene{System: SystemIntensity, Gamma0: 4, Z0: 0.4, V0: 0, Duration: 3, Seed: 1}
	b := a
	b.V0, b.Seed = 200, 2
	fs, zs, err := RenderSet(ctx, []Scene{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if zs[0][0] != zs[1][0] {
		t.Fatalf("z0 differ: %v %v", zs[0][0], zs[1][0])
	}
	if !bytes.Equal(fs[0][0].Pix, fs[1][0].Pix) {
		t.Error("the same z gives different images in the two clips of a set")
	}
	// Per-clip rendering normalises each clip on its own range: clip a's
	// first frame is then at its own maximum (white), unlike in the set.
	fa, _ := mustRender(t, a)
	if bytes.Equal(fa[0].Pix, fs[0][0].Pix) {
		t.Error("Render and RenderSet agree although the ranges differ")
	}
	// The set's extreme z values map to the ends of the gray range.
	poly := randomPolygon(newRand(a.Seed, streamShape), 64).coverageMap(64)
	level := func(f *image.Gray) float64 {
		for i, c := range poly {
			if c == 1 {
				return float64(f.Pix[i])
			}
		}
		return -1
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var xs, ys []float64
	for c := range zs {
		for k, v := range zs[c] {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			xs = append(xs, v)
			ys = append(ys, level(fs[c][k]))
		}
	}
	if r := correlation(xs, ys); r < 0.9999 {
		t.Errorf("joint correlation(gray, z) = %v", r)
	}
	for c := range zs {
		for k, v := range zs[c] {
			want := 255 * (0.2 + 0.8*(v-lo)/(hi-lo))
			if got := level(fs[c][k]); math.Abs(got-want) > 0.51 {
				t.Fatalf("clip %d frame %d: gray %v, want %.2f", c, k, got, want)
			}
		}
	}

	// Scale: same shared map.
	a.System, b.System = SystemScale, SystemScale
	fs, _, err = RenderSet(ctx, []Scene{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fs[0][0].Pix, fs[1][0].Pix) {
		t.Error("scale: the same z gives different images in the two clips of a set")
	}

	// Pendulum: no normalisation, so the set equals the separate renders.
	a.System, b.System = SystemPendulum, SystemPendulum
	a.Z0, b.Z0 = 50, 50
	fs, _, err = RenderSet(ctx, []Scene{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []Scene{a, b} {
		single, _ := mustRender(t, s)
		if !sameFrames(single, fs[i]) {
			t.Errorf("pendulum clip %d differs between Render and RenderSet", i)
		}
	}
}

// RenderEach is Render clip by clip: each clip over its own range, and an
// invalid scene named by its index.
func TestRenderEach(t *testing.T) {
	ctx := context.Background()
	a := Scene{System: SystemScale, Gamma1: 4, Gamma0: 4, Z0: 3, V0: 0, Duration: 1, Seed: 1}
	b := a
	b.V0 = 200
	fs, err := RenderEach(ctx, []Scene{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []Scene{a, b} {
		want, _ := mustRender(t, s)
		for k := range want {
			if !bytes.Equal(fs[i][k].Pix, want[k].Pix) {
				t.Fatalf("clip %d frame %d differs from Render's", i, k)
			}
		}
	}
	bad := b
	bad.FPS = -1
	if _, err := RenderEach(ctx, []Scene{a, bad}); err == nil || !strings.Contains(err.Error(), "scenes[1]") {
		t.Errorf("invalid second scene: %v, want an error naming scenes[1]", err)
	}
}

func TestRenderSetErrors(t *testing.T) {
	ctx := context.Background()
	good := pendulumScene()
	if _, _, err := RenderSet(ctx, nil); err == nil {
		t.Error("empty set accepted")
	}
	bad := good
	bad.FPS = -1
	_, _, err := RenderSet(ctx, []Scene{good, bad})
	if err == nil || !strings.Contains(err.Error(), "scenes[1]") || !strings.Contains(err.Error(), "FPS") || !errors.Is(err, ErrInvalidScene) {
		t.Errorf("bad scene error: %v", err)
	}
	other := good
	other.System = SystemScale
	if _, _, err := RenderSet(ctx, []Scene{good, other}); err == nil || !strings.Contains(err.Error(), "System") {
		t.Errorf("mixed systems error: %v", err)
	}
	other = good
	other.Size = 32
	if _, _, err := RenderSet(ctx, []Scene{good, other}); err == nil || !strings.Contains(err.Error(), "Size") {
		t.Errorf("mixed sizes error: %v", err)
	}
	// Explicit defaults and zero values mix fine.
	other = good
	other.Size, other.FPS = DefaultSize, DefaultFPS(SystemPendulum)
	if _, _, err := RenderSet(ctx, []Scene{good, other}); err != nil {
		t.Errorf("defaults vs explicit: %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := pendulumScene()
	if err := good.Validate(); err != nil {
		t.Fatalf("good scene: %v", err)
	}
	nan := math.NaN()
	for _, tc := range []struct {
		field string
		edit  func(*Scene)
	}{
		{"System", func(s *Scene) { s.System = "spring" }},
		{"System", func(s *Scene) { s.System = "" }},
		{"FPS", func(s *Scene) { s.FPS = -5 }},
		{"FPS", func(s *Scene) { s.FPS = math.Inf(1) }},
		{"Duration", func(s *Scene) { s.Duration = 0.05 }},
		{"Duration", func(s *Scene) { s.Duration = 0 }},
		{"Duration", func(s *Scene) { s.Duration = -3 }},
		{"Duration", func(s *Scene) { s.Duration = nan }},
		{"Duration", func(s *Scene) { s.Duration = 1e12 }},
		{"Duration", func(s *Scene) { s.Duration, s.Size = 200, 4096 }},
		{"Size", func(s *Scene) { s.Size = 15 }},
		{"Size", func(s *Scene) { s.Size = 4097 }},
		{"Size", func(s *Scene) { s.Size = -64 }},
		{"Gamma1", func(s *Scene) { s.Gamma1 = nan }},
		{"Gamma0", func(s *Scene) { s.Gamma0 = math.Inf(-1) }},
		{"Z0", func(s *Scene) { s.Z0 = nan }},
		{"V0", func(s *Scene) { s.V0 = math.Inf(1) }},
		{"Nuisance.Kind", func(s *Scene) { s.Nuisance = Nuisance{"rain", 1} }},
		{"Nuisance.Level", func(s *Scene) { s.Nuisance = Nuisance{NuisanceJitter, 0} }},
		{"Nuisance.Level", func(s *Scene) { s.Nuisance = Nuisance{NuisanceJitter, 4} }},
		{"Nuisance.Level", func(s *Scene) { s.Nuisance = Nuisance{"", 2} }},
	} {
		s := good
		tc.edit(&s)
		err := s.Validate()
		if err == nil {
			t.Errorf("%+v: no error, want one naming %s", s, tc.field)
			continue
		}
		if !strings.Contains(err.Error(), "Scene."+tc.field+" ") || !errors.Is(err, ErrInvalidScene) {
			t.Errorf("%+v: error %q does not name Scene.%s", s, err, tc.field)
		}
		if _, _, rerr := Render(context.Background(), s); rerr == nil {
			t.Errorf("%+v: Render accepted an invalid scene", s)
		}
	}
	// Boundary values that are valid.
	for _, edit := range []func(*Scene){
		func(s *Scene) { s.Duration = 0.15 }, // round(3) frames at 20 fps
		func(s *Scene) { s.Size = MinSize },
		func(s *Scene) { s.Size = 0; s.FPS = 0 },
		func(s *Scene) { s.Nuisance = Nuisance{NuisanceClutter, 3} },
	} {
		s := good
		edit(&s)
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestRenderFailsCleanly(t *testing.T) {
	// A diverging solution overflows: an error, not NaN pixels.
	s := Scene{System: SystemScale, Gamma1: -2000, Gamma0: 1, Z0: 1, Duration: 1}
	if _, _, err := Render(context.Background(), s); err == nil || !strings.Contains(err.Error(), "diverges") {
		t.Errorf("diverging scene: %v", err)
	}
	// A cancelled context stops rendering.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Render(ctx, pendulumScene()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// Odd inputs that are valid never panic.
	for _, s := range []Scene{
		{System: SystemPendulum, Z0: 1e12, Gamma0: 4, Duration: 0.2},
		{System: SystemIntensity, Duration: 0.3},                            // constant z
		{System: SystemScale, Gamma0: -4, Z0: 1e-300, Duration: 0.3},        // tiny range
		{System: SystemScale, Z0: 3, V0: 1e300, Duration: 0.3},              // huge range
		{System: SystemPendulum, Z0: 30, Duration: 0.3, Size: 16, FPS: 1e4}, // fast
		{System: SystemPendulum, Z0: 30, Duration: 30, Size: 16, FPS: 0.1, Nuisance: Nuisance{NuisanceClutter, 3}},
	} {
		for _, nz := range allNuisances() {
			s.Nuisance = nz
			if _, _, err := Render(context.Background(), s); err != nil {
				t.Errorf("%+v: %v", s, err)
			}
		}
	}
	// A constant state is drawn mid-range.
	fs, _ := mustRender(t, Scene{System: SystemIntensity, Duration: 0.3})
	max := uint8(0)
	for _, v := range fs[0].Pix {
		max = max8(max, v)
	}
	if want := quantize(0.6); max != want {
		t.Errorf("constant state: level %d, want %d", max, want)
	}
}

func max8(a, b uint8) uint8 {
	if a > b {
		return a
	}
	return b
}

func TestNuisancesKeepObjectVisible(t *testing.T) {
	clean, _ := mustRender(t, pendulumScene())
	for _, nz := range allNuisances()[1:] {
		for seed := int64(0); seed < 5; seed++ {
			s := pendulumScene()
			s.Nuisance, s.Seed = nz, seed
			fs, z := mustRender(t, s)
			if sameFrames(fs, clean) {
				t.Errorf("%+v: nuisance has no effect", nz)
			}
			for k, f := range fs {
				// The rod is black wherever it is drawn: the pixel half-way
				// along the rod stays dark (moved by at most the jitter).
				th := z[k] * math.Pi / 180
				s, c := math.Sincos(th)
				x, y := 32+s*0.5*64/2.3, 32+c*0.5*64/2.3
				dark := false
				for dy := -6; dy <= 6 && !dark; dy++ {
					for dx := -6; dx <= 6 && !dark; dx++ {
						if nz.Kind != NuisanceJitter && (dx != 0 || dy != 0) {
							continue
						}
						px, py := int(x)+dx, int(y)+dy
						if image.Pt(px, py).In(f.Rect) && f.GrayAt(px, py).Y < 80 {
							dark = true
						}
					}
				}
				if !dark {
					t.Fatalf("%+v seed %d frame %d: rod not visible near (%.1f, %.1f)", nz, seed, k, x, y)
				}
			}
			if nz.Kind == NuisanceBackground || nz.Kind == NuisanceClutter {
				// Distractors never cover the pivot area.
				for k, f := range fs {
					for y := 26; y < 38; y++ {
						for x := 26; x < 38; x++ {
							if f.GrayAt(x, y) != clean[k].GrayAt(x, y) {
								t.Fatalf("%+v seed %d frame %d: pixel (%d,%d) near the pivot changed", nz, seed, k, x, y)
							}
						}
					}
				}
			}
		}
	}
}

func TestJitterLevel1Oscillates(t *testing.T) {
	s := Scene{System: SystemPendulum, Gamma0: 4, Duration: 10, Nuisance: Nuisance{NuisanceJitter, 1}, Size: 128}
	n := newNuisance(s.withDefaults(), s.Frames())
	crossings, peak := 0, 0.0
	for k := range n.offsets {
		if n.offsets[k][0] != 0 {
			t.Fatal("level-1 jitter moved horizontally")
		}
		peak = math.Max(peak, math.Abs(n.offsets[k][1]))
		if k > 0 && (n.offsets[k][1] > 0) != (n.offsets[k-1][1] > 0) {
			crossings++
		}
	}
	if crossings < 13 || crossings > 15 {
		t.Errorf("%d sign changes, want 14 (7 cycles)", crossings)
	}
	if peak < 15.5 || peak > 16 {
		t.Errorf("peak %.2f px, want ≈ 16 (8 px at 64 px, scaled)", peak)
	}
	for _, lv := range []int{2, 3} {
		s.Nuisance.Level = lv
		n := newNuisance(s.withDefaults(), s.Frames())
		lim := [2]float64{6, 4}
		if lv == 3 {
			lim = [2]float64{10 + 8, 8 + 8} // walk plus a burst
		}
		for k, o := range n.offsets {
			if math.Abs(o[0]) > lim[0]+1e-9 || math.Abs(o[1]) > lim[1]+1e-9 {
				t.Fatalf("level %d frame %d: offset %v beyond %v", lv, k, o, lim)
			}
		}
	}
}
