package tracker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/par"
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
	// ErrTwoDimensional: the object moved across its curve as much as
	// along it; no one coordinate is its state (Candidates).
	ErrTwoDimensional = errors.New("the object moves in two dimensions")
)

// Options tune Follow; zero values take the defaults.
type Options struct {
	// Objects is the most objects followed; default 4.
	Objects int
	// MinScore is the normalised cross-correlation below which the object
	// counts as lost in a frame; default 0.6.
	MinScore float64
	// MaxResidual (Candidates) drops a path further than this fraction of
	// its size from its fitted ODE solution before its σ is measured: the
	// certificate's limit (window.Thresholds.MaxTrajectoryResidual); 0
	// keeps every path.
	MaxResidual float64
	// Screen (Candidates), when set, is asked of each path's fit before
	// its σ is measured (estimator.ScreenLatents) whether the bootstrap
	// is worth it; a path it turns down is returned as screened.
	Screen func(*estimator.Result) bool
	// Stream places the window in its camera's stream; zero for a window
	// on its own.
	Stream Stream
}

// Stream is where a window sits in its camera's stream, for following
// objects window after window at the cost of the frames each adds: the
// seeds are taken in frames at fixed places of the stream (every
// seedStride(n, Hop) frames counted from the stream's frame 0), so the
// next window, Hop frames later, cuts the same templates in the same
// frames and follows them along the same predictions, and Cache returns
// those matches instead of searching again.
type Stream struct {
	// Cache keeps the matches for the camera's next windows.
	Cache *Cache
	// First is the stream's index of the first clip's first frame; Hop is
	// how many frames apart successive windows start (0: seeds spread
	// over the window as without a stream).
	First, Hop int
	// match, when set (Weigh, with a Cache), is the clips' frames before
	// exposure normalisation: templates are cut from them and matched in
	// them, so that they are the same frames window after window, while
	// objects are found (seeds) on the normalised ones. A normalised frame
	// is the frame divided by its gain, and the normalised
	// cross-correlation does not see a gain: the matches are the same,
	// to rounding.
	match []estimator.Clip
}

func (o Options) withDefaults() Options {
	if o.Objects <= 0 {
		o.Objects = 6
	}
	if o.MinScore <= 0 {
		o.MinScore = 0.6
	}
	return o
}

// Point is a position in the clips' pixels.
type Point struct{ X, Y float64 }

// Path is one object followed through the frames of every clip it was
// seen in, as runs: a clip's frames where the object was followed
// without a break. An object hidden for a while (behind a hand, a
// passer-by, another object) and found again is one path of several runs
// in that clip.
type Path struct {
	// W, H are the frames' size.
	W, H int
	// Box is the template: where the object was in the first clip's
	// frame Frame.
	Box   Box
	Frame int
	// Pos holds, per run, the template's top-left corner, sub-pixel, in
	// the frames the object was followed through: frames First[i] …
	// First[i]+len(Pos[i])−1 of clip Clip[i]. Runs are in clip and frame
	// order; every clip has at least one.
	Pos   [][]Point
	First []int
	Clip  []int
	// clipLen is each clip's length in frames.
	clipLen []int
	// MinScore is the worst match over the frames (normalised cross-
	// correlation, 1 a perfect match), Median the median one (the
	// lowest of the clips').
	MinScore, Median float64
	// Axis is the unit direction along which the object moved most (the
	// principal axis of its positions), Spread the rms displacement
	// along it, px.
	Axis   Point
	Spread float64
	// Radius > 0 when the object moved on an arc (a bob, a point of a
	// swinging or rocking body) about Centre: the latent is then the arc
	// length, linear in the angle, where a displacement along Axis would
	// bend with the sine of it.
	Centre Point
	Radius float64
	// Across is the rms distance, px, of the positions from that curve
	// (the arc, else the line through their mean along Axis).
	Across float64
}

// whole tells whether the path is one run through the whole of every
// clip.
func (p *Path) whole() bool {
	if len(p.Pos) != len(p.clipLen) {
		return false
	}
	for i, c := range p.Pos {
		if p.First[i] > 0 || len(c) < p.clipLen[p.Clip[i]] {
			return false
		}
	}
	return true
}

// runs places the path's latents on its clips' frames (estimator.Runs),
// or nil when it is one run through the whole of every clip.
func (p *Path) runs() *estimator.Runs {
	if p.whole() {
		return nil
	}
	return &estimator.Runs{Clip: p.Clip, First: p.First}
}

// Name says which object the path follows, for Result.Readout: its
// template's box in the frames the estimator saw, the frame it was cut
// from and, when the object was not followed through a whole clip, the
// frames it was.
func (p *Path) Name() string {
	name := fmt.Sprintf("tracked %d,%d,%d,%d of %d×%d, frame %d", p.Box.X, p.Box.Y, p.Box.W, p.Box.H, p.W, p.H, p.Frame)
	if p.whole() {
		return name
	}
	for i, c := range p.Pos {
		name += fmt.Sprintf(", clip %d frames %d–%d", p.Clip[i], p.First[i], p.First[i]+len(c)-1)
	}
	return name
}

// Latents are the displacements along Axis per clip and frame,
//
//	z_t = (p_t − p̄) · a,  a the principal axis, p̄ the mean position,
//
// or, for a path on an arc about c of radius R, the arc length from the
// mean direction u = (p̄ − c)/|p̄ − c|:
//
//	z_t = R · atan2(u × (p_t − c), u · (p_t − c)),
//
// signed so that it grows along Axis as the displacement does.
func (p *Path) Latents() [][]float64 {
	m := meanOf(p.Pos)
	out := make([][]float64, len(p.Pos))
	var ux, uy, sign float64
	if p.Radius > 0 {
		ux, uy = m.X-p.Centre.X, m.Y-p.Centre.Y
		n := math.Hypot(ux, uy)
		ux, uy = ux/n, uy/n
		// u rotated a quarter turn is the tangent there; its side of
		// Axis fixes the sign.
		sign = 1
		if -uy*p.Axis.X+ux*p.Axis.Y < 0 {
			sign = -1
		}
	}
	for k, c := range p.Pos {
		out[k] = make([]float64, len(c))
		for i, q := range c {
			if p.Radius > 0 {
				dx, dy := q.X-p.Centre.X, q.Y-p.Centre.Y
				out[k][i] = sign * p.Radius * math.Atan2(ux*dy-uy*dx, ux*dx+uy*dy)
				continue
			}
			out[k][i] = (q.X-m.X)*p.Axis.X + (q.Y-m.Y)*p.Axis.Y
		}
	}
	return out
}

// seedFrames is how many frames of the first clip, evenly spaced from
// its first, objects are looked for in: an object that touches another
// in one of them (a bob passing a parked square, a hand on the mass)
// stands alone in another.
const seedFrames = 7

// seedAt is the frames of an n-frame first clip objects are looked for
// in: seedFrames of them evenly spaced from the first, or, for a window
// of a stream (s.Hop > 0), every seedStride(n, s.Hop)-th frame of the
// stream that falls in the window.
func seedAt(n int, s Stream) []int {
	var out []int
	if s.Hop <= 0 {
		for q := range seedFrames {
			k := q * n / seedFrames
			if q == 0 || k != out[len(out)-1] {
				out = append(out, k)
			}
		}
		return out
	}
	d := seedStride(n, s.Hop)
	for k := (d - s.First%d) % d; k < n; k += d {
		out = append(out, k)
	}
	return out
}

// seedStride is the spacing of a stream's seed frames: the hop, or the
// fraction of it, that puts about seedFrames of them in an n-frame
// window. A stride that divides the hop seeds every window in frames
// its predecessor seeded.
func seedStride(n, hop int) int {
	parts := max(1, int(math.Round(float64(hop)*seedFrames/float64(n))))
	return max(1, hop/parts)
}

// Follow finds up to opt.Objects objects in each seed frame of the first
// clip (seedAt) and follows each forwards and backwards through
// every frame of that clip; a later clip finds the object anew in its
// first frame (the best match anywhere) and follows it forwards. An
// object found in several frames is kept once, its path with the best
// worst match. It returns the paths that were followed to the end and
// moved; when none was, the first one's error.
func Follow(ctx context.Context, clips []estimator.Clip, opt Options) ([]Path, error) {
	opt = opt.withDefaults()
	if len(clips) == 0 || len(clips[0].Frames) == 0 {
		return nil, fmt.Errorf("tracker: no frames: %w", ErrNoObject)
	}
	workers := par.Workers(ctx)
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
	match := clips
	if m := opt.Stream.match; m != nil {
		if !sameShape(m, clips) {
			return nil, fmt.Errorf("tracker: the frames to match are not the clips' shape")
		}
		match = m
	}
	n := len(clips[0].Frames)
	var ids [][]frameID
	c := opt.Stream.Cache
	if c != nil {
		c.begin()
		ids = make([][]frameID, len(match))
		for m, cl := range match {
			ids[m] = frameIDs(cl.Frames)
		}
	}
	var bg, act []float64
	frames := make([][][]float64, len(match))
	for m, cl := range match {
		frames[m] = cl.Frames
	}
	sm := newSoft(frames, w, h)
	var paths []Path
	var firstErr error
	found := 0
	at := seedAt(n, opt.Stream)
	if c != nil {
		at = c.order(at, ids[0], w, opt.Objects)
	}
	for _, k := range at {
		// A stream's seed frame is seeded once, by the first window that
		// holds it: the next windows cut the same templates there.
		var key seedKey
		ss, ok := []seed(nil), false
		if c != nil {
			key = seedKey{ids[0][k], w, opt.Objects}
			ss, ok = c.seeds(key)
		}
		if !ok {
			if bg == nil {
				bg, act = background(clips)
			}
			ss = seeds(clips[0].Frames[k], bg, act, w, h, opt.Objects)
			if c != nil {
				c.putSeeds(key, ss)
			}
		}
		found += len(ss)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// With several workers (par.Workers) the seeds of one frame are
		// followed at once and their paths then taken in seed order
		// exactly as one after the other: a seed a path of this frame
		// turns out to follow is dropped unseen (seeds of one frame are
		// distinct objects, so little is followed in vain). With one, a
		// seed is followed only when its turn comes and no path has it.
		var todo []seed
		for _, s := range ss {
			if !followed(paths, s.box, k) {
				todo = append(todo, s)
			}
		}
		res := make([]Path, len(todo))
		errs := make([]error, len(todo))
		ahead := workers > 1 && len(todo) > 1
		if ahead {
			par.For(workers, len(todo), func(i int) { res[i], errs[i] = follow(match, ids, sm, todo[i], k, opt) })
		}
		for i, s := range todo {
			if followed(paths, s.box, k) {
				continue
			}
			if !ahead {
				res[i], errs[i] = follow(match, ids, sm, s, k, opt)
			}
			if errs[i] != nil {
				firstErr = cmpErr(firstErr, errs[i])
				continue
			}
			paths = keep(paths, res[i])
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("tracker: %w", ErrNoObject)
	}
	if len(paths) == 0 {
		return nil, firstErr
	}
	if c != nil {
		for _, p := range paths {
			c.kept(seedKey{ids[0][p.Frame], w, opt.Objects})
		}
	}
	return paths, nil
}

// sameShape tells whether a and b hold as many clips of as many frames
// of one size.
func sameShape(a, b []estimator.Clip) bool {
	if len(a) != len(b) {
		return false
	}
	for m := range a {
		if a[m].W != b[m].W || a[m].H != b[m].H || len(a[m].Frames) != len(b[m].Frames) {
			return false
		}
		for i, f := range a[m].Frames {
			if len(f) != len(b[m].Frames[i]) {
				return false
			}
		}
	}
	return true
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// samePx is the rms difference, px, below which two paths' displacements
// (positions less their means) are one object's.
const samePx = 1.0

// keep adds p to paths unless it follows an object already there, in
// which case the path whose template matches the object better (the
// higher median match) stays: a template cut while something touched the
// object carries a piece of that and pulls every position towards it. Of
// two alike (within sameScore), the path followed through more frames
// stays, of two as long the one with the better worst match.
func keep(paths []Path, p Path) []Path {
	for i := range paths {
		if sameObject(&paths[i], &p) {
			q := &paths[i]
			switch d := p.Median - q.Median; {
			case d > sameScore:
				*q = p
			case d < -sameScore:
			case p.frames() > q.frames() || p.frames() == q.frames() && p.MinScore > q.MinScore:
				*q = p
			}
			return paths
		}
	}
	return append(paths, p)
}

// followed tells whether a path already follows the object seed box b
// of the first clip's frame k stands for, with a clean template (median
// match ≥ cleanTemplate): the object is where the path has it in frame
// k, its template as large. Following it again from here would find the
// same path; a path whose template matches poorly may yet be replaced by
// this one's (keep).
func followed(paths []Path, b Box, k int) bool {
	for i := range paths {
		p := &paths[i]
		if p.Median < cleanTemplate || abs(p.Box.W-b.W) > 1 || abs(p.Box.H-b.H) > 1 {
			continue
		}
		for r := range p.Pos {
			if p.Clip[r] != 0 || k < p.First[r] || k >= p.First[r]+len(p.Pos[r]) {
				continue
			}
			q := p.Pos[r][k-p.First[r]]
			if math.Abs(q.X-float64(b.X)) <= 1.5 && math.Abs(q.Y-float64(b.Y)) <= 1.5 {
				return true
			}
		}
	}
	return false
}

// cleanTemplate is the median match from which a path's template counts
// as a clean cut of its object.
const cleanTemplate = 0.9

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// sameScore is the difference of median matches below which two
// templates of one object count as alike.
const sameScore = 0.02

// frames is how many frames the path was followed through.
func (p *Path) frames() int {
	n := 0
	for _, c := range p.Pos {
		n += len(c)
	}
	return n
}

// sameObject tells whether a and b move together over the frames both
// were followed through: their displacements from their mean positions
// there differ by less than samePx rms.
func sameObject(a, b *Path) bool {
	// Each pair of runs of one clip shares frames [lo, hi).
	type span struct{ ra, rb, lo, hi int }
	var both []span
	var ma, mb Point
	n := 0
	for i := range a.Pos {
		for j := range b.Pos {
			if a.Clip[i] != b.Clip[j] {
				continue
			}
			lo, hi := max(a.First[i], b.First[j]), min(a.First[i]+len(a.Pos[i]), b.First[j]+len(b.Pos[j]))
			if lo >= hi {
				continue
			}
			both = append(both, span{i, j, lo, hi})
			for k := lo; k < hi; k++ {
				pa, pb := a.Pos[i][k-a.First[i]], b.Pos[j][k-b.First[j]]
				ma.X, ma.Y, mb.X, mb.Y = ma.X+pa.X, ma.Y+pa.Y, mb.X+pb.X, mb.Y+pb.Y
				n++
			}
		}
	}
	if n < estimator.MinFrames {
		return false
	}
	ma.X, ma.Y, mb.X, mb.Y = ma.X/float64(n), ma.Y/float64(n), mb.X/float64(n), mb.Y/float64(n)
	var s float64
	for _, sp := range both {
		for k := sp.lo; k < sp.hi; k++ {
			pa, pb := a.Pos[sp.ra][k-a.First[sp.ra]], b.Pos[sp.rb][k-b.First[sp.rb]]
			dx, dy := (pa.X-ma.X)-(pb.X-mb.X), (pa.Y-ma.Y)-(pb.Y-mb.Y)
			s += dx*dx + dy*dy
		}
	}
	return s/float64(n) < samePx*samePx
}

// lossMargin is how many frames before the one an object was lost in are
// dropped with it: an object passing behind another drags the match
// towards it for a frame or two before the score falls.
const lossMargin = 2

// reacquireScore is the match at which a lost object is taken as found
// again anywhere in a later frame: stricter than Options.MinScore, which
// only has to hold the object where it is expected.
const reacquireScore = 0.7

// reacquireReach is how far, px, from a position the object was followed
// through it is looked for again.
const reacquireReach = 2

// follow tracks the template s of the first clip's frame k: forwards and
// backwards through that clip, forwards through the others (each found
// anew in its first frame). Where the object is lost — behind a hand, a
// passer-by, another object — its run ends, less lossMargin frames, and
// the object is looked for anew in every following frame; where it
// matches again (reacquireScore) a new run begins, less lossMargin
// frames as it comes out. Runs shorter than estimator.MinFrames are
// dropped; every clip must keep one.
func follow(clips []estimator.Clip, ids [][]frameID, sm *soft, s seed, k int, opt Options) (Path, error) {
	w, h := clips[0].W, clips[0].H
	b := s.box
	t := newTemplate(clips[0].Frames[k], w, b, s.mask)
	if t == nil {
		return Path{}, fmt.Errorf("tracker: template %v is flat: %w", b, ErrNoObject)
	}
	if ids != nil {
		t.cache, t.key = opt.Stream.Cache, templateKey(t)
	}
	p := Path{W: w, H: h, Box: b, Frame: k, MinScore: 1, clipLen: make([]int, len(clips))}
	var (
		runs0 []span
		pos0  []Point
	)
	for m, c := range clips {
		p.clipLen[m] = len(c.Frames)
		pos := make([]Point, len(c.Frames))
		start, from := Point{float64(b.X), float64(b.Y)}, k
		if m > 0 {
			ix, iy, _ := t.bestAnywhere(c.Frames[0], w, h)
			start, from = Point{float64(ix), float64(iy)}, 0
		}
		if ids != nil {
			t.ids = ids[m]
		}
		runs, worst, med, err := t.runs(c.Frames, w, h, start, from, opt.MinScore, pos)
		if len(runs) == 0 {
			if err == nil {
				err = ErrLost
			}
			return Path{}, fmt.Errorf("tracker: %v of frame %d in clip %d followed through no run of %d frames: %w", b, k, m, estimator.MinFrames, err)
		}
		for _, r := range runs {
			p.Pos, p.First, p.Clip = append(p.Pos, pos[r.lo:r.hi]), append(p.First, r.lo), append(p.Clip, m)
		}
		if m == 0 {
			runs0, pos0 = runs, pos
		}
		p.MinScore = math.Min(p.MinScore, worst)
		if m == 0 || med < p.Median {
			p.Median = med
		}
	}
	p.Axis, p.Spread = principal(p.Pos)
	if r := reach(p.Pos, p.Axis); !(p.Spread >= minSpread) && !(r >= minReach) {
		return Path{}, fmt.Errorf("tracker: %v moved %.2f px rms (< %g), %.2f px at most (< %g): %w", b, p.Spread, minSpread, r, minReach, ErrStill)
	}
	p.refine(sm, k, s, runs0, pos0)
	p.Axis, p.Spread = principal(p.Pos)
	p.Centre, p.Radius, p.Across = arcOf(p.Pos, p.Axis)
	return p, nil
}

// refine places the path's positions again to a fraction of a pixel on
// the smoothed frames (template.refine), by the template cut from the
// first clip's frame k, reduced to the pixels that move with the object
// (template.moving, read over runs0 of the first clip, whose positions
// pos0 holds). Positions refine cannot place stay where the match put
// them.
func (p *Path) refine(sm *soft, k int, s seed, runs0 []span, pos0 []Point) {
	w, h := p.W, p.H
	f0 := sm.frame(0, k)
	fine := newFine(f0, w, p.Box, s.mask)
	if fine == nil {
		return
	}
	if mt, ok := fine.moving(f0, w, h, p.Box, s.mask, sm, 0, runs0, pos0); ok {
		fine = mt
	}
	for j, c := range p.Pos {
		for i, q := range c {
			if r, ok := fine.refine(sm.frame(p.Clip[j], p.First[j]+i), w, h, q, nil); ok {
				c[i] = r
			}
		}
	}
}

// span is a run of frames [lo, hi) of one clip.
type span struct{ lo, hi int }

// runs follows the template through one clip from start in frame from,
// forwards to the clip's end and backwards to its start, finding the
// object again after each loss (follow). It writes the positions into
// pos and returns the runs of at least estimator.MinFrames frames in
// frame order, the worst and the median match over them, and why the
// first run that was too short ended.
func (t *template) runs(frames [][]float64, w, h int, start Point, from int, minScore float64, pos []Point) ([]span, float64, float64, error) {
	score := make([]float64, len(frames))
	worst := 1.0
	var firstErr error
	// seg follows from (q, i) in direction step until the clip's end or a
	// loss; it returns the run's frames [lo, hi) trimmed at the ends
	// where the object was lost or came back, and the frame after the
	// loss to look from again (−1: none).
	seg := func(q Point, i, step int, back bool) (span, int) {
		end, wst, lost := t.track(frames, w, h, q, i, step, minScore, pos, score)
		worst = math.Min(worst, wst)
		firstErr = cmpErr(firstErr, lost)
		var sp span
		next := -1
		if step > 0 {
			sp = span{i, end}
			if lost != nil {
				sp.hi -= lossMargin
				next = end + 1
			}
			if back {
				sp.lo += lossMargin
			}
		} else {
			sp = span{end, i + 1}
			if lost != nil {
				sp.lo += lossMargin
				next = end - 2
			}
			if back {
				sp.hi -= lossMargin
			}
		}
		return sp, next
	}
	// The object is looked for again only where it has been (within
	// reacquireReach of a position it was followed through): it moves
	// on one curve and comes back, and a like-looking object elsewhere
	// (a square of clutter, a second bob) is not taken for it.
	nx, ny := w-t.w+1, h-t.h+1
	near := make([]bool, nx*ny)
	visit := func(sp span, lo, hi int) {
		lo, hi = max(sp.lo, lo), min(sp.hi, hi)
		if lo >= hi {
			return
		}
		for _, q := range pos[lo:hi] {
			x0, y0 := int(math.Round(q.X)), int(math.Round(q.Y))
			for y := max(0, y0-reacquireReach); y <= min(ny-1, y0+reacquireReach); y++ {
				for x := max(0, x0-reacquireReach); x <= min(nx-1, x0+reacquireReach); x++ {
					near[y*nx+x] = true
				}
			}
		}
	}
	// found looks for the object from frame i in direction step and
	// returns where and in which frame it matches again.
	found := func(i, step int) (Point, int) {
		corners := t.cornersOf(near)
		for ; i >= 0 && i < len(frames); i += step {
			if x, y, s := t.bestWhereMemo(frames[i], i, w, near, corners); s >= reacquireScore {
				return Point{float64(x), float64(y)}, i
			}
		}
		return Point{}, -1
	}
	fwd, next := seg(start, from, 1, false)
	visit(fwd, 0, len(frames))
	seedRun := fwd
	var after []span
	for next >= 0 {
		q, i := found(next, 1)
		if i < 0 {
			break
		}
		var sp span
		sp, next = seg(q, i, 1, true)
		visit(sp, 0, len(frames))
		after = append(after, sp)
	}
	var before []span
	if from > 0 {
		bwd, next := seg(start, from, -1, false)
		visit(bwd, 0, len(frames))
		seedRun.lo = bwd.lo
		for next >= 0 {
			q, i := found(next, -1)
			if i < 0 {
				break
			}
			var sp span
			sp, next = seg(q, i, -1, true)
			visit(sp, 0, len(frames))
			before = append(before, sp)
		}
	}
	var out []span
	for i := len(before) - 1; i >= 0; i-- {
		out = append(out, before[i])
	}
	out = append(out, seedRun)
	out = append(out, after...)
	// A frame where the object matched clearly worse than it usually does
	// is one where something touched or covered it: its position is
	// pulled towards the other object, so it is left out and the run
	// split there.
	var all []float64
	for _, sp := range out {
		if sp.lo < sp.hi {
			all = append(all, score[sp.lo:sp.hi]...)
		}
	}
	med := median(all)
	clean := math.Max(minScore, med-cleanDrop)
	var kept []span
	for _, sp := range out {
		lo := sp.lo
		for i := sp.lo; i <= sp.hi; i++ {
			if i < sp.hi && score[i] >= clean {
				continue
			}
			if i-lo >= estimator.MinFrames {
				kept = append(kept, span{lo, i})
			}
			lo = i + 1
		}
	}
	return kept, worst, med, firstErr
}

// cleanDrop is how far below its median match a frame's match may fall
// before the object counts as touched or partly covered there.
const cleanDrop = 0.1

// median of v (destroys its order); 0 when empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// track follows the template from start in frame from, frame by frame in
// the direction step (±1), writing each position into pos, until the
// clip's end or the first frame that matches below minScore. It returns
// the end of the run — one past the last frame followed going forwards,
// the first frame followed going backwards — the worst match, and why it
// stopped early (nil at the clip's end).
func (t *template) track(frames [][]float64, w, h int, start Point, from, step int, minScore float64, pos []Point, score []float64) (int, float64, error) {
	worst := 1.0
	var prev, prev2 Point
	i, n := from, 0
	for ; i >= 0 && i < len(frames); i, n = i+step, n+1 {
		ix, iy := int(math.Round(start.X)), int(math.Round(start.Y))
		if n > 0 {
			// Predict from the last two positions: constant velocity.
			px, py := prev.X, prev.Y
			if n > 1 {
				px, py = 2*prev.X-prev2.X, 2*prev.Y-prev2.Y
			}
			ix, iy = int(math.Round(px)), int(math.Round(py))
		}
		// The search covers the prediction's error, which grows with
		// the speed; a best match on the border widens it (search).
		r := 2 + int(math.Ceil(math.Hypot(prev.X-prev2.X, prev.Y-prev2.Y)/2))
		q, s := t.searchMemo(frames[i], i, w, h, ix, iy, r)
		if !(s >= minScore) {
			err := fmt.Errorf("frame %d matches at %.2f < %.2f: %w", i, s, minScore, ErrLost)
			if step < 0 {
				return i + 1, worst, err
			}
			return i, worst, err
		}
		worst = math.Min(worst, s)
		pos[i] = q
		score[i] = s
		prev2, prev = prev, q
		if n == 0 {
			prev2 = q
		}
	}
	if step < 0 {
		return 0, worst, nil
	}
	return len(frames), worst, nil
}

// An object moved when its rms displacement is at least minSpread px, or
// its reach at least minReach px: a decay that starts at two pixels and
// dies in a few seconds moves less than half a pixel rms over a window
// of twenty.
const (
	minSpread = 0.5
	minReach  = 1.5
)

// reach is the 99th percentile of the displacements |(p − p̄)·a| along
// the axis a: the swing's extent, but for a few mismatched frames.
func reach(pos [][]Point, a Point) float64 {
	m := meanOf(pos)
	var d []float64
	for _, c := range pos {
		for _, q := range c {
			d = append(d, math.Abs((q.X-m.X)*a.X+(q.Y-m.Y)*a.Y))
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[(len(d)-1)*99/100]
}

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
