package tracker

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
)

// Errors of Follow.
var (
	// ErrNoObject: no blob in the first frame differs from the background.
	ErrNoObject = errors.New("no object stands out from the background")
	// ErrLost: the template matched nowhere well enough in some frame.
	ErrLost = errors.New("object lost")
	// ErrStill: the tracked object did not move.
	ErrStill = errors.New("object did not move")
	// ErrPoorFit: the object's path is no ODE solution (Candidates).
	ErrPoorFit = errors.New("the path does not fit the ODE")
)

// Options tune Follow; zero values take the defaults.
type Options struct {
	// Objects is the most objects followed; default 2.
	Objects int
	// MinScore is the normalised cross-correlation below which the object
	// counts as lost in a frame; default 0.6.
	MinScore float64
	// MaxResidual (Candidates) drops a path further than this fraction of
	// its size from its fitted ODE solution before its σ is measured: the
	// certificate's limit (window.Thresholds.MaxTrajectoryResidual); 0
	// keeps every path.
	MaxResidual float64
}

func (o Options) withDefaults() Options {
	if o.Objects <= 0 {
		o.Objects = 2
	}
	if o.MinScore <= 0 {
		o.MinScore = 0.6
	}
	return o
}

// Point is a position in the clips' pixels.
type Point struct{ X, Y float64 }

// Path is one object followed through every frame of every clip.
type Path struct {
	// W, H are the frames' size.
	W, H int
	// Box is the template: where the object was in the first clip's
	// first frame.
	Box Box
	// Pos holds, per clip and frame, the template's top-left corner,
	// sub-pixel.
	Pos [][]Point
	// MinScore is the worst match over the frames (normalised cross-
	// correlation, 1 a perfect match).
	MinScore float64
	// Axis is the unit direction along which the object moved most (the
	// principal axis of its positions), Spread the rms displacement
	// along it, px.
	Axis   Point
	Spread float64
}

// Name says which object the path follows, for Result.Readout: its
// template's box in the frames the estimator saw.
func (p *Path) Name() string {
	return fmt.Sprintf("tracked %d,%d,%d,%d of %d×%d", p.Box.X, p.Box.Y, p.Box.W, p.Box.H, p.W, p.H)
}

// Latents are the displacements along Axis per clip and frame:
//
//	z_t = (p_t − p̄) · a,  a the principal axis, p̄ the mean position.
func (p *Path) Latents() [][]float64 {
	m := meanOf(p.Pos)
	mx, my := m.X, m.Y
	out := make([][]float64, len(p.Pos))
	for m, c := range p.Pos {
		out[m] = make([]float64, len(c))
		for i, q := range c {
			out[m][i] = (q.X-mx)*p.Axis.X + (q.Y-my)*p.Axis.Y
		}
	}
	return out
}

// Follow finds up to opt.Objects objects in the first clip's first frame
// (seeds) and follows each through every frame of every clip. A clip
// after the first finds the object anew in its first frame (the best
// match anywhere). It returns the paths that were followed to the end
// and moved; when none was, the first one's error.
func Follow(ctx context.Context, clips []estimator.Clip, opt Options) ([]Path, error) {
	opt = opt.withDefaults()
	if len(clips) == 0 || len(clips[0].Frames) == 0 {
		return nil, fmt.Errorf("tracker: no frames: %w", ErrNoObject)
	}
	w, h := clips[0].W, clips[0].H
	for m, c := range clips {
		if c.W != w || c.H != h || len(c.Frames) == 0 {
			return nil, fmt.Errorf("tracker: clip %d is %d×%d with %d frames, the first %d×%d", m, c.W, c.H, len(c.Frames), w, h)
		}
		for i, f := range c.Frames {
			if len(f) != w*h {
				return nil, fmt.Errorf("tracker: clip %d frame %d has %d pixels for %d×%d", m, i, len(f), w, h)
			}
		}
	}
	bg, act := background(clips)
	boxes := seeds(clips[0].Frames[0], bg, act, w, h, opt.Objects)
	if len(boxes) == 0 {
		return nil, fmt.Errorf("tracker: %w", ErrNoObject)
	}
	var paths []Path
	var firstErr error
	for _, b := range boxes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := follow(clips, b, opt)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return nil, firstErr
	}
	return paths, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// follow tracks the template b of the first clip's first frame.
func follow(clips []estimator.Clip, b Box, opt Options) (Path, error) {
	w, h := clips[0].W, clips[0].H
	t := newTemplate(clips[0].Frames[0], w, b)
	if t == nil {
		return Path{}, fmt.Errorf("tracker: template %v is flat: %w", b, ErrNoObject)
	}
	p := Path{W: w, H: h, Box: b, MinScore: 1, Pos: make([][]Point, len(clips))}
	for m, c := range clips {
		var prev, prev2 Point
		var ix, iy int
		if m == 0 {
			ix, iy = b.X, b.Y
		} else {
			ix, iy = t.bestAnywhere(c.Frames[0], w, h)
		}
		p.Pos[m] = make([]Point, len(c.Frames))
		for i, f := range c.Frames {
			if i > 0 {
				// Predict from the last two positions: constant velocity.
				px, py := prev.X, prev.Y
				if i > 1 {
					px, py = 2*prev.X-prev2.X, 2*prev.Y-prev2.Y
				}
				ix, iy = int(math.Round(px)), int(math.Round(py))
			}
			// The search covers the prediction's error, which grows with
			// the speed; a best match on the border widens it (search).
			r := 2 + int(math.Ceil(math.Hypot(prev.X-prev2.X, prev.Y-prev2.Y)/2))
			q, s := t.search(f, w, h, ix, iy, r)
			if !(s >= opt.MinScore) {
				return Path{}, fmt.Errorf("tracker: %v in clip %d frame %d matches at %.2f < %.2f: %w", b, m, i, s, opt.MinScore, ErrLost)
			}
			p.MinScore = math.Min(p.MinScore, s)
			p.Pos[m][i] = q
			prev2, prev = prev, q
			if i == 0 {
				prev2 = q
			}
		}
	}
	p.Axis, p.Spread = principal(p.Pos)
	if !(p.Spread >= minSpread) {
		return Path{}, fmt.Errorf("tracker: %v moved %.2f px rms (< %g): %w", b, p.Spread, minSpread, ErrStill)
	}
	return p, nil
}

// minSpread is the least rms displacement, px, of an object that moved.
const minSpread = 0.5

// principal is the unit principal axis of the positions and the rms
// displacement along it: the leading eigenvector of their 2×2 covariance
//
//	C = [[sxx, sxy], [sxy, syy]],  λ = (sxx+syy)/2 + √(((sxx−syy)/2)² + sxy²).
func principal(pos [][]Point) (Point, float64) {
	m := meanOf(pos)
	mx, my := m.X, m.Y
	n := 0
	for _, c := range pos {
		n += len(c)
	}
	var sxx, syy, sxy float64
	for _, c := range pos {
		for _, q := range c {
			dx, dy := q.X-mx, q.Y-my
			sxx += dx * dx
			syy += dy * dy
			sxy += dx * dy
		}
	}
	sxx, syy, sxy = sxx/float64(n), syy/float64(n), sxy/float64(n)
	lam := (sxx+syy)/2 + math.Sqrt((sxx-syy)*(sxx-syy)/4+sxy*sxy)
	a := Point{sxy, lam - sxx}
	if math.Abs(sxx-lam) < math.Abs(syy-lam) {
		a = Point{lam - syy, sxy}
	}
	norm := math.Hypot(a.X, a.Y)
	if !(norm > 0) {
		a, norm = Point{1, 0}, 1
	}
	return Point{a.X / norm, a.Y / norm}, math.Sqrt(math.Max(0, lam))
}

// meanOf is the mean of every position of every clip.
func meanOf(pos [][]Point) Point {
	var m Point
	n := 0
	for _, c := range pos {
		for _, q := range c {
			m.X += q.X
			m.Y += q.Y
			n++
		}
	}
	if n > 0 {
		m.X /= float64(n)
		m.Y /= float64(n)
	}
	return m
}
