package sim

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
)

// Geometry of the rendered systems (fractions of the frame side unless
// noted).
const (
	// pendulumViewHalf is the half-width of the pendulum view in world
	// units: the frame spans 2·(L + 0.15L) with L = 1.
	pendulumViewHalf = 1.15
	// pendulumRodWidth is the rod line width as a fraction of the frame.
	pendulumRodWidth = 0.022
	// pendulumBobRadius is the bob radius in world units (0.1·L).
	pendulumBobRadius = 0.1

	intensityMin, intensityMax   = 0.2, 1.0
	polyMinVerts, polyMaxVerts   = 6, 10
	polyMinRadius, polyMaxRadius = 0.25, 0.45

	// scaleRadius is R; scaleMaxRadius clips each half-disc radius.
	scaleRadius    = 0.25
	scaleMaxRadius = 0.45
	// scaleRange is the half-range of r: z maps affinely to [−10, 10] and
	// the half-disc radii are R(1 ± r/10).
	scaleRange = 10.0

	// distractorGray is the colour of nuisance squares on the black
	// background of the intensity and scale systems.
	distractorGray = 0.5
)

// PCG stream constants, so that the object shape and the nuisance draw
// from independent streams of the same seed.
const (
	streamShape    = 0x7368617065 // "shape"
	streamNuisance = 0x6e75697361 // "nuisa"
)

func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// Render renders one clip of the scene: Frames() gray frames of Size×Size
// pixels at times k/FPS, and the true state z_k at each frame time (the
// closed-form solution of Solve). For the intensity and scale systems the
// state is mapped affinely onto the gray-level or radius range using the
// minimum and maximum of z over this clip (use RenderSet to share the map
// between clips); a constant z maps to the middle of the range.
//
// It returns an error if the scene is invalid (see Scene.Validate), if the
// state is not finite at some frame (e.g. a diverging solution with
// negative damping overflowed), or if ctx is done.
func Render(ctx context.Context, s Scene) (frames []*image.Gray, z []float64, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	fs, zs, err := renderSet(ctx, []Scene{s}, func(i int, err error) error { return fmt.Errorf("sim: %w", err) })
	if err != nil {
		return nil, nil, err
	}
	return fs[0], zs[0], nil
}

// RenderEach renders each scene through its own observation map, as
// Render does: for the intensity and scale systems each clip's z is
// normalised over that clip alone, as the authors' generators do for the
// paper's three-clip sets. Errors name the scene's index.
func RenderEach(ctx context.Context, scenes []Scene) ([][]*image.Gray, error) {
	frames := make([][]*image.Gray, len(scenes))
	for i, s := range scenes {
		fs, _, err := Render(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("scenes[%d]: %w", i, err)
		}
		frames[i] = fs
	}
	return frames, nil
}

// RenderSet renders several clips that share one observation map, as in the
// paper's multi-trajectory experiments. All scenes must have the same
// System and the same Size (after defaults). For the intensity and scale
// systems the affine map from z to the gray level or the radius range is
// computed jointly over the states of ALL clips, so a given value of z is
// drawn identically in every clip; the polygon of the intensity system is
// drawn from scenes[0].Seed for every clip for the same reason. The pendulum
// angle is drawn directly, without normalisation. Each clip's nuisance
// still comes from its own Seed.
//
// The results are indexed like scenes. Errors name the offending scene as
// scenes[i].
func RenderSet(ctx context.Context, scenes []Scene) ([][]*image.Gray, [][]float64, error) {
	if len(scenes) == 0 {
		return nil, nil, errors.New("sim: RenderSet needs at least one scene")
	}
	for i, s := range scenes {
		if err := s.Validate(); err != nil {
			var se *SceneError
			if errors.As(err, &se) {
				se.Index = i
				return nil, nil, se
			}
			return nil, nil, fmt.Errorf("sim: scenes[%d]: %w", i, err)
		}
	}
	first := scenes[0].withDefaults()
	for i, s := range scenes[1:] {
		d := s.withDefaults()
		if d.System != first.System {
			return nil, nil, &SceneError{Index: i + 1, Field: "System",
				Msg: fmt.Sprintf("is %q but scenes[0] is %q; a set must share one system", d.System, first.System)}
		}
		if d.Size != first.Size {
			return nil, nil, &SceneError{Index: i + 1, Field: "Size",
				Msg: fmt.Sprintf("is %d but scenes[0] is %d; a set must share one frame size", d.Size, first.Size)}
		}
	}
	return renderSet(ctx, scenes, func(i int, err error) error { return fmt.Errorf("sim: scenes[%d]: %w", i, err) })
}

// renderSet renders validated scenes of one system and size; wrap adds the
// scene index to per-clip errors.
func renderSet(ctx context.Context, scenes []Scene, wrap func(int, error) error) ([][]*image.Gray, [][]float64, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	zs := make([][]float64, len(scenes))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range scenes {
		s = s.withDefaults()
		t := s.Times()
		z, _ := Solve(s.Gamma1, s.Gamma0, s.Z0, s.V0, t)
		for k, v := range z {
			if !finite(v) {
				return nil, nil, wrap(i, fmt.Errorf("state z is %v at t = %v s (frame %d); the solution diverges", v, t[k], k))
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		zs[i] = z
	}
	obs := newObserver(scenes[0].withDefaults(), lo, hi)
	frames := make([][]*image.Gray, len(scenes))
	for i, s := range scenes {
		fs, err := renderClip(ctx, s.withDefaults(), zs[i], obs)
		if err != nil {
			return nil, nil, wrap(i, err)
		}
		frames[i] = fs
	}
	return frames, zs, nil
}

// observer is the observation map shared by the clips of a set: it draws
// the object for a given state onto a canvas.
type observer struct {
	system System
	size   int
	lo, hi float64   // normalisation range of z (intensity and scale)
	poly   []float64 // coverage of the intensity polygon
}

func newObserver(s Scene, lo, hi float64) *observer {
	o := &observer{system: s.System, size: s.Size, lo: lo, hi: hi}
	if s.System == SystemIntensity {
		o.poly = randomPolygon(newRand(s.Seed, streamShape), s.Size).coverageMap(s.Size)
	}
	return o
}

// unit maps z affinely onto [0, 1] over the normalisation range; a
// degenerate range maps to 0.5.
func (o *observer) unit(z float64) float64 {
	w := o.hi - o.lo
	if !(w > 1e-12*math.Max(1, math.Max(math.Abs(o.lo), math.Abs(o.hi)))) {
		return 0.5
	}
	return clamp01((z - o.lo) / w)
}

// background returns the background value and the colour of distractor
// squares for the system.
func (o *observer) background() (bg, distractor float64) {
	if o.system == SystemPendulum {
		return 1, 0
	}
	return 0, distractorGray
}

// draw composites the object in state z onto c.
func (o *observer) draw(c *canvas, z float64) {
	n := float64(o.size)
	cx, cy := n/2, n/2
	switch o.system {
	case SystemPendulum:
		ppu := n / (2 * pendulumViewHalf) // pixels per world unit
		th := z * math.Pi / 180
		s, co := math.Sincos(th)
		bx, by := cx+s*ppu, cy+co*ppu // image y points down
		hw := pendulumRodWidth * n / 2
		rb := pendulumBobRadius * ppu
		f := func(x, y float64) float64 {
			return math.Min(segmentDist(x, y, cx, cy, bx, by)-hw, math.Hypot(x-bx, y-by)-rb)
		}
		m := math.Max(hw, rb)
		bb := rect{math.Min(cx, bx) - m, math.Min(cy, by) - m, math.Max(cx, bx) + m, math.Max(cy, by) + m}
		c.paintSDF(f, bb, 0)
	case SystemIntensity:
		level := intensityMin + (intensityMax-intensityMin)*o.unit(z)
		c.paintCoverage(o.poly, level)
	case SystemScale:
		r := -scaleRange + 2*scaleRange*o.unit(z)
		fr := r / scaleRange
		rmax := scaleMaxRadius * n
		rl := math.Min(math.Max(scaleRadius*n*(1+fr), 0), rmax)
		rr := math.Min(math.Max(scaleRadius*n*(1-fr), 0), rmax)
		f := func(x, y float64) float64 {
			d := math.Hypot(x-cx, y-cy)
			left := math.Max(d-rl, x-cx)
			right := math.Max(d-rr, cx-x)
			return math.Min(left, right)
		}
		m := math.Max(rl, rr)
		c.paintSDF(f, rect{cx - m, cy - m, cx + m, cy + m}, 1)
	}
}

// randomPolygon draws a star-shaped polygon around the frame centre with
// 6–10 vertices at jittered random angles and radii 0.25–0.45 of the size.
func randomPolygon(rng *rand.Rand, size int) polygon {
	n := polyMinVerts + rng.IntN(polyMaxVerts-polyMinVerts+1)
	phase := 2 * math.Pi * rng.Float64()
	c := float64(size) / 2
	p := polygon{xs: make([]float64, n), ys: make([]float64, n)}
	for k := 0; k < n; k++ {
		a := phase + 2*math.Pi*(float64(k)+0.1+0.8*rng.Float64())/float64(n)
		r := (polyMinRadius + (polyMaxRadius-polyMinRadius)*rng.Float64()) * float64(size)
		s, co := math.Sincos(a)
		p.xs[k], p.ys[k] = c+r*co, c+r*s
	}
	return p
}

// renderClip renders the frames of one clip with the shared observer.
func renderClip(ctx context.Context, s Scene, z []float64, o *observer) ([]*image.Gray, error) {
	nz := newNuisance(s, len(z))
	bg, distractor := o.background()
	c := newCanvas(s.Size)
	tmp := make([]float64, len(c.px))
	frames := make([]*image.Gray, len(z))
	for k, zk := range z {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("rendering stopped at frame %d: %w", k, err)
		}
		c.fill(bg)
		for _, r := range nz.squares(k) {
			c.paintRect(r, distractor)
		}
		o.draw(c, zk)
		nz.light(c, k)
		if dx, dy := nz.offset(k); dx != 0 || dy != 0 {
			c.shift(dx, dy, bg, tmp)
		}
		frames[k] = c.gray()
	}
	return frames, nil
}
