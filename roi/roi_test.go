package roi

import (
	"errors"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/stream"
)

// scene renders a synthetic camera: a textured wall with pixel noise, and
// whatever the test adds, as grid frames made by the search's own
// preprocessing (the block means a real video gives).
type scene struct {
	w, h   int
	fps    float64
	frames int
	seed   uint64
	// draw paints frame k (time t) over the wall; pix is row-major w×h.
	draw []func(pix []float64, k int, t float64)
	// gain, when set, scales the whole picture (exposure) at time t.
	gain func(t float64) float64
	// shift, when set, moves the whole picture by (dx, dy) pixels at t
	// (camera shake; bilinear).
	shift func(t float64) (float64, float64)
}

// grid renders the scene and returns it as a search input.
func (s scene) grid(t *testing.T) Grid {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 7))
	wall := make([]float64, s.w*s.h)
	// A low-contrast texture: smooth blobs plus fine grain, so that a
	// shake moves something.
	for i := range wall {
		x, y := float64(i%s.w), float64(i/s.w)
		wall[i] = 120 + 12*math.Sin(x/7.3)*math.Cos(y/5.1) + 8*math.Sin((x+2*y)/13) + 4*rng.NormFloat64()
	}
	var frames []stream.Frame
	pix := make([]float64, s.w*s.h)
	img := image.NewGray(image.Rect(0, 0, s.w, s.h))
	for k := range s.frames {
		tm := float64(k) / s.fps
		if s.shift != nil {
			dx, dy := s.shift(tm)
			shiftInto(pix, wall, s.w, s.h, dx, dy)
		} else {
			copy(pix, wall)
		}
		for _, d := range s.draw {
			d(pix, k, tm)
		}
		g := 1.0
		if s.gain != nil {
			g = s.gain(tm)
		}
		for i, v := range pix {
			img.Pix[i] = uint8(min(255, max(0, math.Round(g*v+2*rng.NormFloat64()))))
		}
		f, err := Preprocess().ApplyGray(img)
		if err != nil {
			t.Fatal(err)
		}
		f.Time = time.Duration(tm * float64(time.Second))
		frames = append(frames, f)
	}
	g, err := FromFrames(frames, 0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// shiftInto samples src moved by (dx, dy) into dst, bilinearly, edges
// clamped.
func shiftInto(dst, src []float64, w, h int, dx, dy float64) {
	at := func(x, y int) float64 { return src[min(h-1, max(0, y))*w+min(w-1, max(0, x))] }
	for y := range h {
		for x := range w {
			sx, sy := float64(x)-dx, float64(y)-dy
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			dst[y*w+x] = (1-fx)*(1-fy)*at(x0, y0) + fx*(1-fy)*at(x0+1, y0) + (1-fx)*fy*at(x0, y0+1) + fx*fy*at(x0+1, y0+1)
		}
	}
}

// disc paints a disc of radius r at (cx, cy) with level v, antialiased.
func disc(pix []float64, w, h int, cx, cy, r, v float64) {
	for y := max(0, int(cy-r-1)); y <= min(h-1, int(cy+r+1)); y++ {
		for x := max(0, int(cx-r-1)); x <= min(w-1, int(cx+r+1)); x++ {
			d := math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy)
			a := min(1, max(0, r+0.5-d))
			pix[y*w+x] = (1-a)*pix[y*w+x] + a*v
		}
	}
}

// rect paints [x0, x1)×[y0, y1) with level v.
func rect(pix []float64, w, h int, x0, y0, x1, y1, v float64) {
	for y := max(0, int(y0)); y < min(h, int(y1)); y++ {
		for x := max(0, int(x0)); x < min(w, int(x1)); x++ {
			pix[y*w+x] = v
		}
	}
}

// oscillator is a dark bob swinging horizontally about (cx, cy) with
// amplitude a (pixels), frequency f and damping ratio zeta.
type oscillator struct{ cx, cy, a, f, zeta, r float64 }

func (o oscillator) draw(w, h int) func([]float64, int, float64) {
	return func(pix []float64, _ int, t float64) {
		wn := 2 * math.Pi * o.f
		x := o.cx + o.a*math.Exp(-o.zeta*wn*t)*math.Cos(wn*math.Sqrt(1-o.zeta*o.zeta)*t)
		disc(pix, w, h, x, o.cy, o.r, 30)
	}
}

// path is the box the bob sweeps, in pixels.
func (o oscillator) path() Region {
	return Region{X: int(o.cx - o.a - o.r), Y: int(o.cy - o.r), W: int(2 * (o.a + o.r)), H: int(2 * o.r)}
}

func contains(outer, inner Region) bool {
	return inner.X >= outer.X && inner.Y >= outer.Y && inner.X+inner.W <= outer.X+outer.W && inner.Y+inner.H <= outer.Y+outer.H
}

func overlaps(a, b Region) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// TestFindOscillatorAmongTransients: a damped bob, a passer-by who crosses
// the top of the picture in the last 1.5 s, a hand that waves near the bob
// for the first second, and an exposure change of +30 % for a second. The
// region found holds the bob's whole path and none of the passer-by's or
// the hand's, at the bob's frequency, with its aspect ratio kept.
func TestFindOscillatorAmongTransients(t *testing.T) {
	const w, h, fps, n = 320, 240, 30.0, 240
	bob := oscillator{cx: 200, cy: 170, a: 40, f: 1.1, zeta: 0.03, r: 7}
	passer := Region{X: 0, Y: 10, W: 320, H: 70}
	hand := Region{X: 20, Y: 120, W: 70, H: 100}
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 1,
		draw: []func([]float64, int, float64){
			bob.draw(w, h),
			func(pix []float64, _ int, t float64) { // passer-by, 6.5 s → 8 s
				if t > 6.5 {
					x := -60 + (t-6.5)*260
					rect(pix, w, h, x, float64(passer.Y), x+60, float64(passer.Y+passer.H), 60)
				}
			},
			func(pix []float64, _ int, t float64) { // a hand shaking at 1.1 Hz too, for a second
				if t < 1 {
					y := 150 + 25*math.Sin(2*math.Pi*1.1*t)
					rect(pix, w, h, 30, y-25, 80, y+25, 200)
				}
			},
		},
		gain: func(t float64) float64 {
			if t > 2 && t < 3 {
				return 1.3
			}
			return 1
		},
	}
	g := sc.grid(t)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v (active %v), %d×%d, %.3f Hz, %d cells, persistence %.2f; alternatives %+v",
		res.Region, res.Active, res.OutW, res.OutH, res.FreqHz, res.Cells, res.Persistence, res.Alternatives)
	if !contains(res.Region, bob.path()) {
		t.Errorf("region %v does not hold the bob's path %v", res.Region, bob.path())
	}
	if overlaps(res.Region, passer) {
		t.Errorf("region %v overlaps the passer-by's %v", res.Region, passer)
	}
	if overlaps(res.Region, hand) {
		t.Errorf("region %v overlaps the hand's %v", res.Region, hand)
	}
	if math.Abs(res.FreqHz-bob.f) > 0.05 {
		t.Errorf("frequency %.3f Hz, want the bob's %.3f", res.FreqHz, bob.f)
	}
	// The region is tight: at most a quarter of the picture.
	if a := res.Region.W * res.Region.H; a > w*h/4 {
		t.Errorf("region %v holds %d pixels, over a quarter of the %d×%d picture", res.Region, a, w, h)
	}
	checkOutput(t, res)
}

// checkOutput asserts the output keeps the region's aspect ratio within a
// pixel and stays within the budget (or the region's own size).
func checkOutput(t *testing.T, res Result) {
	t.Helper()
	r := res.Region
	if res.OutW*res.OutH > max(64*64+64, r.W*r.H) {
		t.Errorf("output %d×%d exceeds the budget", res.OutW, res.OutH)
	}
	if d := math.Abs(float64(res.OutW)/float64(res.OutH) - float64(r.W)/float64(r.H)); d > float64(r.W)/float64(r.H)*(1/float64(res.OutW)+1/float64(res.OutH)) {
		t.Errorf("output %d×%d distorts the %d×%d region", res.OutW, res.OutH, r.W, r.H)
	}
	p := res.Preprocess(stream.Preprocess{Size: 64})
	if ow, oh := p.OutputSize(r.W, r.H); ow != res.OutW || oh != res.OutH {
		t.Errorf("Preprocess makes %d×%d, the result says %d×%d", ow, oh, res.OutW, res.OutH)
	}
}

// TestFindExcludesReleasingHand: the window starts with the hand that
// holds the bob at the end of its swing, lets go and withdraws upwards
// and to the right: busy in the first sub-segment, right next to the bob.
// The region holds the bob's path and not the hand's way out.
func TestFindExcludesReleasingHand(t *testing.T) {
	const w, h, fps, n = 320, 240, 30.0, 270
	bob := oscillator{cx: 150, cy: 180, a: 45, f: 0.9, zeta: 0.01, r: 7}
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 5,
		draw: []func([]float64, int, float64){
			bob.draw(w, h),
			func(pix []float64, _ int, t float64) {
				x, y := bob.cx+bob.a-15, bob.cy-bob.r-70 // fingers on the bob
				if t > 0.5 {
					x, y = x+(t-0.5)*150, y-(t-0.5)*150
				}
				rect(pix, w, h, x, y, x+30, y+70, 215)
			},
		},
	}
	g := sc.grid(t)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v (active %v) at %.3f Hz, %d cells", res.Region, res.Active, res.FreqHz, res.Cells)
	if !contains(res.Region, bob.path()) {
		t.Errorf("region %v does not hold the bob's path %v", res.Region, bob.path())
	}
	// The region is the path and its margin: it does not climb into the
	// hand above the bob, nor follow it out.
	if top := int(bob.cy - 4*bob.r - 10); res.Region.Y < top {
		t.Errorf("region %v reaches up to y = %d, into the hand (the bob's path is %v)", res.Region, res.Region.Y, bob.path())
	}
	if out := (Region{X: 230, Y: 0, W: w - 230, H: 140}); overlaps(res.Region, out) {
		t.Errorf("region %v reaches into the hand's way out %v", res.Region, out)
	}
}

// TestFindNothingOscillates: the same wall, passer-by, hand and exposure
// change without the bob: an error that says so, not a region.
func TestFindNothingOscillates(t *testing.T) {
	const w, h, fps, n = 320, 240, 30.0, 240
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 2,
		draw: []func([]float64, int, float64){
			func(pix []float64, _ int, t float64) {
				if t > 6.5 {
					x := -60 + (t-6.5)*260
					rect(pix, w, h, x, 10, x+60, 80, 60)
				}
			},
			func(pix []float64, _ int, t float64) {
				if t < 1 {
					y := 150 + 25*math.Sin(2*math.Pi*1.1*t)
					rect(pix, w, h, 30, y-25, 80, y+25, 200)
				}
			},
		},
		gain: func(t float64) float64 { return 1 + 0.3*math.Max(0, math.Min(1, t-2)) },
	}
	g := sc.grid(t)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if !errors.Is(err, ErrNoOscillation) {
		t.Fatalf("Find = %+v, %v; want ErrNoOscillation", res, err)
	}
	t.Log(err)
}

// TestFindUnderCameraShake: the camera shakes by 1.5 px at 2.3 Hz, so
// every textured cell oscillates; the bob (0.8 Hz) is what the region
// holds, not the whole picture.
func TestFindUnderCameraShake(t *testing.T) {
	const w, h, fps, n = 320, 240, 30.0, 300
	bob := oscillator{cx: 90, cy: 80, a: 30, f: 0.8, zeta: 0.01, r: 6}
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 3,
		draw: []func([]float64, int, float64){bob.draw(w, h)},
		shift: func(t float64) (float64, float64) {
			return 1.5 * math.Sin(2*math.Pi*2.3*t), 1.0 * math.Cos(2*math.Pi*2.3*t)
		},
	}
	g := sc.grid(t)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v at %.3f Hz, %d cells; alternatives %+v", res.Region, res.FreqHz, res.Cells, res.Alternatives)
	if !contains(res.Region, bob.path()) || math.Abs(res.FreqHz-bob.f) > 0.05 {
		t.Errorf("region %v at %.3f Hz; want the bob's path %v at %.2f Hz", res.Region, res.FreqHz, bob.path(), bob.f)
	}
	if a := res.Region.W * res.Region.H; a > w*h/4 {
		t.Errorf("region %v holds %d pixels, over a quarter of the picture", res.Region, a)
	}
}

// TestFindSmallObject: a 4-pixel bob in a 960×540 picture (a cell is
// about 13 pixels) swinging 12 pixels: found, and its region is used at
// its own size (no enlargement beyond the crop's pixels).
func TestFindSmallObject(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 960×540 frames")
	}
	const w, h, fps, n = 960, 540, 25.0, 150
	bob := oscillator{cx: 700, cy: 400, a: 12, f: 1.7, zeta: 0.005, r: 4}
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 4, draw: []func([]float64, int, float64){bob.draw(w, h)}}
	g := sc.grid(t)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v → %d×%d (budget side %d), %.3f Hz", res.Region, res.OutW, res.OutH, res.Size, res.FreqHz)
	if !contains(res.Region, bob.path()) || math.Abs(res.FreqHz-bob.f) > 0.05 {
		t.Errorf("region %v at %.3f Hz; want the bob's path %v at %.2f Hz", res.Region, res.FreqHz, bob.path(), bob.f)
	}
	if res.Region.W*res.Region.H <= 64*64 && (res.Size != 0 || res.OutW != res.Region.W || res.OutH != res.Region.H) {
		t.Errorf("a %v region within the budget is resized to %d×%d (size %d)", res.Region, res.OutW, res.OutH, res.Size)
	}
	checkOutput(t, res)
}

// TestFindTwoClips: two videos of one camera, each too short to hold the
// bob's oscillation three times over on its own persistence sub-segments,
// are searched together.
func TestFindTwoClips(t *testing.T) {
	const w, h, fps = 160, 120, 30.0
	bob := oscillator{cx: 60, cy: 60, a: 20, f: 1.5, zeta: 0.02, r: 5}
	var clips []Clip
	var g Grid
	for i := range 2 {
		sc := scene{w: w, h: h, fps: fps, frames: 75, seed: uint64(10 + i), draw: []func([]float64, int, float64){bob.draw(w, h)}}
		g = sc.grid(t)
		clips = append(clips, g.Clip)
	}
	res, err := Find(clips, Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Region, bob.path()) {
		t.Errorf("region %v does not hold the bob's path %v", res.Region, bob.path())
	}
	if res.SubSegments < minSegs || res.Frames != 150 {
		t.Errorf("%d sub-segments over %d frames", res.SubSegments, res.Frames)
	}
}

// TestFindRejectsBadInput: errors that wrap ErrInput and name the field,
// never a panic.
func TestFindRejectsBadInput(t *testing.T) {
	ok := func() Clip {
		c := Clip{W: 8, H: 6, Dt: 0.04}
		for range 40 {
			c.Frames = append(c.Frames, make([]float32, 48))
		}
		return c
	}
	nan := ok()
	nan.Frames[3][5] = float32(math.NaN())
	short := ok()
	short.Frames = short.Frames[:5]
	other := ok()
	other.W, other.H = 6, 8
	ragged := ok()
	ragged.Frames[7] = ragged.Frames[7][:10]
	zeroDt := ok()
	zeroDt.Dt = 0
	tiny := Clip{W: 2, H: 2, Dt: 0.04, Frames: make([][]float32, 40)}
	for _, tc := range []struct {
		clips []Clip
		opt   Options
		want  string
	}{
		{nil, Options{}, "no clip"},
		{[]Clip{nan}, Options{}, "non-finite"},
		{[]Clip{short}, Options{}, "frames"},
		{[]Clip{ok(), other}, Options{}, "grid"},
		{[]Clip{ragged}, Options{}, "cells"},
		{[]Clip{zeroDt}, Options{}, "Dt"},
		{[]Clip{tiny}, Options{}, "grid"},
		{[]Clip{ok()}, Options{SrcW: 4, SrcH: 3}, "source"},
		{[]Clip{ok()}, Options{Size: -1}, "Size"},
		{[]Clip{ok()}, Options{MinFreq: math.NaN()}, "MinFreq"},
		{[]Clip{ok()}, Options{MinFreq: 11}, "no frequency"},
	} {
		_, err := Find(tc.clips, tc.opt)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Find = %v, want ErrInput naming %q", tc.want, err, tc.want)
		}
	}
	// A still picture: nothing to find, said as such.
	if _, err := Find([]Clip{ok()}, Options{}); !errors.Is(err, ErrNoOscillation) {
		t.Errorf("still picture: %v, want ErrNoOscillation", err)
	}
}

// median is the middle of the sorted values, the mean of the two
// middles for an even count, however Select leaves the slice: short
// lengths (Hoare's) and long ones (partitions first) included.
func TestMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 300 {
		n := 1 + rng.IntN(2000)
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(50)) + 0.5*rng.Float64()
			if trial%3 == 0 {
				x[i] = float64(rng.IntN(4)) // ties
			}
		}
		s := slices.Clone(x)
		slices.Sort(s)
		want := s[n/2]
		if n%2 == 0 {
			want = (s[n/2-1] + s[n/2]) / 2
		}
		if got := median(x); got != want {
			t.Fatalf("n %d: median %v, sort gives %v", n, got, want)
		}
	}
}

// TestFindEarlyDecay: a bob released at 2.5 Hz with ζ 5 % falls to a
// hundredth of its swing in 6 s of a 20 s clip, too briefly for the
// persistence test over the whole clip; the search over the clip's
// leading part finds it (LeadingS), and a hand that waves at the same
// frequency for the first 1.5 s elsewhere in view is not taken for it.
func TestFindEarlyDecay(t *testing.T) {
	const w, h, fps, n = 320, 240, 30.0, 600
	bob := oscillator{cx: 200, cy: 150, a: 6, f: 2.5, zeta: 0.05, r: 7}
	hand := Region{X: 20, Y: 20, W: 60, H: 100}
	sc := scene{w: w, h: h, fps: fps, frames: n, seed: 3,
		draw: []func([]float64, int, float64){
			bob.draw(w, h),
			func(pix []float64, _ int, t float64) {
				if t < 1.5 {
					y := 70 + 20*math.Sin(2*math.Pi*2.5*t)
					rect(pix, w, h, 30, y-30, 70, y+30, 200)
				}
			},
		},
	}
	g := sc.grid(t)
	whole, err := find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH, Size: 64})
	if !errors.Is(err, ErrNoOscillation) {
		t.Fatalf("over the whole clip: %+v, %v; want ErrNoOscillation (the decay is too brief to persist)", whole.Region, err)
	}
	t.Logf("over the whole clip: %v", err)
	res, err := Find([]Clip{g.Clip}, Options{SrcW: g.SrcW, SrcH: g.SrcH, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v over the leading %.1f s, %.3f Hz, %d cells, persistence %.2f", res.Region, res.LeadingS, res.FreqHz, res.Cells, res.Persistence)
	if !(res.LeadingS > 0 && res.LeadingS < n/fps) {
		t.Errorf("LeadingS %g, want the leading part of the %g s clip", res.LeadingS, n/fps)
	}
	if !contains(res.Region, bob.path()) {
		t.Errorf("region %v does not hold the bob's path %v", res.Region, bob.path())
	}
	if overlaps(res.Region, hand) {
		t.Errorf("region %v overlaps the hand's %v", res.Region, hand)
	}
	if math.Abs(res.FreqHz-bob.f) > 0.05 {
		t.Errorf("frequency %.3f Hz, want the bob's %.3f", res.FreqHz, bob.f)
	}
	checkOutput(t, res)
}
