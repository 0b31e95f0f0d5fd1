package motion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/physd/physd/internal/finite"
	"github.com/physd/physd/internal/par"
	"github.com/physd/physd/internal/symeig"
)

// Options tunes Measure. The zero value is the default.
type Options struct {
	// MinRevisit is the least camera motion, in frame pixels (rms over
	// the frames that revisit a state), that counts as detected; default
	// 0.3. Below it the frames are left as they are.
	MinRevisit float64
	// Revisits is how many other frames that look most alike each frame is
	// registered with (besides its neighbours in time); default 4.
	Revisits int
	// Cache, when set, keeps frames' and pairs' results for the next
	// windows of the same camera (see Cache); the results are the same.
	Cache *Cache
	// keepPreps has the Cache keep the frames' preparations too: for the
	// detection test's half-size frames only, since a full-size frame's
	// is four times larger and that pass runs only on windows that move.
	keepPreps bool
}

func (o Options) withDefaults() Options {
	if !(o.MinRevisit > 0) {
		o.MinRevisit = 0.3
	}
	if o.Revisits <= 0 {
		o.Revisits = 4
	}
	return o
}

// Errors of Measure.
var (
	// ErrInvalid reports frames Measure cannot work on: none, a size
	// below 8×8, a frame of the wrong length, a NaN or infinite pixel.
	ErrInvalid = errors.New("invalid frames")
)

// maxPairResidual is the largest relative residual (see Register) at
// which two frames still count as the same scene moved: above it they are
// unrelated views and say nothing about the camera.
const maxPairResidual = 0.5

// pair is one measured relation: frame b of the window (all clips'
// frames numbered in order) shows frame a's scene moved by d, with
// relative residual r once aligned. revisit marks a pair that is not a
// frame and its successor.
type pair struct {
	a, b    int
	d       Shift
	r       float64
	revisit bool
	// r0 is the relative residual without moving b (d = 0).
	r0 float64
}

// weight is the pair's weight in the least-squares fit of the shifts:
// the residual, a measure of how far the two frames are from showing the
// same state, scales its error; unrelated frames get none.
func (p pair) weight() float64 {
	if !(p.r < maxPairResidual) {
		return 0
	}
	return 1 / (p.r + 0.002)
}

// Measure estimates the camera's own motion over one window's clips of
// w×h frames (row-major gray, any range) from the images alone, and says
// whether it is large enough to remove (Track.Detected) and whether it
// can be (Track.Applied).
//
// The image of frame k is the scene in its state θ_k moved by the camera
// shift s_k. Two frames in the same state differ only by s_b − s_a, so a
// registration of the two measures it exactly; two consecutive frames
// differ by s_{k+1} − s_k plus the object's own apparent motion, which,
// the state being one-dimensional, is the change of some function a(θ).
// Measure registers every frame with its successor and with the frames
// that look most alike up to a translation (nearest in the magnitude of
// their spectra), and solves the weighted least-squares problem
// ŝ_b − ŝ_a ≈ d_ab. Its solution is s + a(θ) + noise: the camera's motion
// plus some function of the state, which the pairs cannot tell apart from
// the object's appearance. The state is read from the pairs' graph itself
// (the Fiedler vector of its weighted Laplacian, which orders frames by
// how alike they look) and a cubic in it is regressed out of ŝ, leaving
// the part of the motion that the state does not explain. A function of
// the state left over is harmless: the frames moved back by it still show
// one object whose image depends on its state alone.
//
// The motion is detected when frames in the same state are displaced
// from one another by at least MinRevisit rms: a test that the object's
// own motion cannot pass, since in one state it looks the same. A window
// without such revisits (a single overdamped release) gives no evidence
// and is left alone.
func Measure(ctx context.Context, clips [][][]float64, w, h int, opt Options) (*Track, error) {
	opt = opt.withDefaults()
	if err := validateFrames(clips, w, h); err != nil {
		return nil, err
	}
	if w < minSide || h < minSide {
		// A region this small (a small object in a small video, cropped
		// at its own resolution) holds too few pixels to register: no
		// evidence of motion, and no reason to refuse the frames.
		t := &Track{Source: SourceAuto, Note: fmt.Sprintf("frames of %d×%d are below %d×%d: camera motion not measured", w, h, minSide, minSide)}
		return noMotion(t, clips), nil
	}
	if opt.Cache != nil {
		opt.Cache.begin()
	}
	n := 0
	for _, fs := range clips {
		n += len(fs)
	}
	// A window is first tested on at most detectFrames frames (every
	// stride-th) at half resolution: the test needs revisits, not every
	// frame nor every pixel, and most windows show no camera motion. Its
	// cost is O(n²) in the frames' descriptors, O(n³) in the state's
	// ordering and O(P log P) a registration. Only a window whose test
	// shows the camera moving is measured frame by frame at full size.
	stride := (n + detectFrames - 1) / detectFrames
	half := w >= 2*minSide && h >= 2*minSide
	if stride > 1 || half {
		sub := make([][][]float64, len(clips))
		dw, dh, m := w, h, 0
		for c, fs := range clips {
			for k := 0; k < len(fs); k += stride {
				m++
				f := fs[k]
				if half {
					f, dw, dh = opt.Cache.halve(f, w, h)
				}
				sub[c] = append(sub[c], f)
			}
		}
		o, scale := opt, 1.0
		o.keepPreps = true
		if half {
			o.MinRevisit, scale = opt.MinRevisit/2, 2
		}
		t, err := measure(ctx, sub, dw, dh, o)
		if err != nil {
			return nil, err
		}
		if !t.Detected {
			t.Revisit, t.Inconsistency = scale*t.Revisit, scale*t.Inconsistency
			t.Note += fmt.Sprintf(" (tested on %d of %d frames at %d×%d)", m, n, dw, dh)
			return noMotion(t, clips), nil
		}
	}
	t, err := measure(ctx, clips, w, h, opt)
	if err != nil || t.Detected {
		return t, err
	}
	return noMotion(t, clips), nil
}

// noMotion sets a track without detected camera motion to zero shifts: what
// the fit of the pairs left is the object's, not the camera's.
func noMotion(t *Track, clips [][][]float64) *Track {
	t.Shifts, t.RMS = zeroShifts(clips), 0
	return t
}

// minSide is the smallest frame side Measure works on.
const minSide = 8

// halve returns the w×h frame f averaged over 2×2 blocks.
func halve(f []float64, w, h int) ([]float64, int, int) {
	hw, hh := w/2, h/2
	out := make([]float64, hw*hh)
	for y := range hh {
		r0, r1 := f[2*y*w:], f[(2*y+1)*w:]
		for x := range hw {
			out[y*hw+x] = 0.25 * (r0[2*x] + r0[2*x+1] + r1[2*x] + r1[2*x+1])
		}
	}
	return out, hw, hh
}

// detectFrames is the most frames Measure tests at once for camera
// motion before measuring it frame by frame.
const detectFrames = 300

// zeroShifts is a track's shifts for clips when no camera motion was
// found.
func zeroShifts(clips [][][]float64) [][]Shift {
	out := make([][]Shift, len(clips))
	for c, fs := range clips {
		out[c] = make([]Shift, len(fs))
	}
	return out
}

// measure is Measure on every frame of clips.
func measure(ctx context.Context, clips [][][]float64, w, h int, opt Options) (*Track, error) {
	var frames [][]float64
	var clipOf, start []int
	for c, fs := range clips {
		start = append(start, len(frames))
		for _, f := range fs {
			frames = append(frames, f)
			clipOf = append(clipOf, c)
		}
	}
	n := len(frames)
	workers := par.Count(par.Workers(ctx), n)
	regs := make([]*registrar, workers)
	for i := range regs {
		regs[i] = newRegistrar(w, h)
	}
	// Each frame's descriptor (for finding revisits) and, where a pair
	// must be registered afresh, its preparation. A Cache keeps the
	// descriptors, the preparations and the pairs' results: a frame it has
	// seen is prepared once, however many windows' new pairs need it.
	prep := make([]prepared, n)
	prepped := make([]bool, n)
	desc := make([][]float64, n)
	var prints []uint64
	if opt.Cache != nil {
		prints = make([]uint64, n)
	}
	keep := prints != nil && opt.keepPreps
	if err := parallel(ctx, workers, n, func(wk, k int) {
		if prints != nil {
			prints[k] = fingerprint(frames[k])
			if desc[k] = opt.Cache.descriptor(frames[k], prints[k], w, h); desc[k] != nil {
				return
			}
		}
		prep[k], prepped[k] = regs[wk].prepare(frames[k]), true
		desc[k] = descriptor(prep[k].spec, w, h)
		if prints != nil {
			opt.Cache.putDescriptor(frames[k], prints[k], w, h, desc[k])
			if keep {
				opt.Cache.putPreparation(frames[k], prints[k], w, h, prep[k])
			}
		}
	}); err != nil {
		return nil, err
	}
	// The pairs to register: each frame with its successor, and with the
	// frames that look most like it up to a translation.
	var cand []pair
	seen := make(map[[2]int]bool)
	add := func(a, b int, revisit bool) {
		if a > b {
			a, b = b, a
		}
		if !seen[[2]int{a, b}] {
			seen[[2]int{a, b}] = true
			cand = append(cand, pair{a: a, b: b, revisit: revisit})
		}
	}
	for k := 0; k+1 < n; k++ {
		if clipOf[k] == clipOf[k+1] {
			add(k, k+1, false)
		}
	}
	// The descriptor distances: with a cache, the whole matrix, kept for
	// the next window; without, row by row (a long clip's matrix would
	// be its frame count squared).
	var dist []float64
	if opt.Cache != nil {
		var err error
		if dist, err = opt.Cache.distances(ctx, workers, frames, prints, desc, w, h); err != nil {
			return nil, err
		}
	}
	near := make([][]int, n)
	rows := make([][]float64, workers)
	if err := parallel(ctx, workers, n, func(wk, k int) {
		var row []float64
		if dist != nil {
			row = dist[k*n : (k+1)*n]
		} else {
			if rows[wk] == nil {
				rows[wk] = make([]float64, n)
			}
			row = rows[wk]
			for l := range n {
				row[l] = descDist(desc[k], desc[l])
			}
		}
		near[k] = revisits(row, k, clipOf, opt.Revisits)
	}); err != nil {
		return nil, err
	}
	for k := range n {
		for _, l := range near[k] {
			add(k, l, true)
		}
	}
	ok := make([]bool, len(cand))
	todo := make([]int, 0, len(cand))
	for i := range cand {
		p := &cand[i]
		if prints != nil {
			if e, hit := opt.Cache.registered(frames[p.a], frames[p.b], [2]uint64{prints[p.a], prints[p.b]}, w, h); hit {
				p.d, p.r, ok[i], p.r0 = e.d, e.r, e.ok, e.r0
				continue
			}
		}
		todo = append(todo, i)
	}
	var need []int
	for _, i := range todo {
		for _, k := range [2]int{cand[i].a, cand[i].b} {
			if !prepped[k] {
				prepped[k] = true
				need = append(need, k)
			}
		}
	}
	if err := parallel(ctx, workers, len(need), func(wk, i int) {
		k := need[i]
		if keep {
			if p, ok := opt.Cache.preparation(frames[k], prints[k], w, h); ok {
				prep[k] = p
				return
			}
		}
		prep[k] = regs[wk].prepare(frames[k])
		if keep {
			opt.Cache.putPreparation(frames[k], prints[k], w, h, prep[k])
		}
	}); err != nil {
		return nil, err
	}
	if err := parallel(ctx, workers, len(todo), func(wk, j int) {
		i := todo[j]
		p := &cand[i]
		p.d, p.r, ok[i] = regs[wk].register(&prep[p.a], &prep[p.b])
		if ok[i] {
			p.r0 = still(&prep[p.a], &prep[p.b])
		}
		if prints != nil {
			opt.Cache.putRegistered(frames[p.a], frames[p.b], [2]uint64{prints[p.a], prints[p.b]}, w, h, pairEntry{d: p.d, r: p.r, ok: ok[i], r0: p.r0})
		}
	}); err != nil {
		return nil, err
	}
	pairs := make([]pair, 0, len(cand))
	for i, p := range cand {
		if ok[i] {
			pairs = append(pairs, p)
		}
	}
	return solve(frames, w, h, pairs, start, opt), nil
}

// parallel is par.ForWorker that stops taking items once ctx is done,
// and then returns its error.
func parallel(ctx context.Context, workers, n int, fn func(worker, i int)) error {
	par.ForWorker(workers, n, func(w, i int) {
		if ctx.Err() == nil {
			fn(w, i)
		}
	})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("motion: %w", err)
	}
	return nil
}

func validate(clips [][][]float64, w, h int) error {
	if w < minSide || h < minSide {
		return fmt.Errorf("motion: frame size %d×%d is below %d×%d: %w", w, h, minSide, minSide, ErrInvalid)
	}
	return validateFrames(clips, w, h)
}

// validateFrames checks that there are frames, each w×h (positive) and
// finite.
func validateFrames(clips [][][]float64, w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("motion: frame size %d×%d: %w", w, h, ErrInvalid)
	}
	if len(clips) == 0 {
		return fmt.Errorf("motion: no clips: %w", ErrInvalid)
	}
	for c, fs := range clips {
		if len(fs) == 0 {
			return fmt.Errorf("motion: clip %d has no frames: %w", c, ErrInvalid)
		}
		for k, f := range fs {
			if len(f) != w*h {
				return fmt.Errorf("motion: clip %d frame %d has %d pixels, want %d×%d: %w", c, k, len(f), w, h, ErrInvalid)
			}
			if i, v, bad := finite.First(f); bad {
				return fmt.Errorf("motion: clip %d frame %d pixel %d is %g: %w", c, k, i, v, ErrInvalid)
			}
		}
	}
	return nil
}

// descriptor is a translation-invariant summary of a frame: the
// magnitudes of its tapered spectrum (spec, a plan2 half spectrum) up to a
// quarter of the sampling rate (one of each conjugate pair).
func descriptor(spec []complex128, w, h int) []float64 {
	fu, fv := max(1, w/4), max(1, h/4)
	hw := w/2 + 1
	out := make([]float64, 0, (fu+1)*(2*fv+1))
	for v := -fv; v <= fv; v++ {
		row := ((v + h) % h) * hw
		for u := 0; u <= fu; u++ {
			if u == 0 && v <= 0 {
				continue
			}
			c := spec[row+u]
			out = append(out, math.Hypot(real(c), imag(c)))
		}
	}
	return out
}

// descDist is the squared distance between two frames' descriptors,
//
//	d(k, l) = Σ_i (desc_k[i] − desc_l[i])²,
//
// the same to the bit either way round.
func descDist(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		e := v - b[i]
		s += e * e
	}
	return s
}

// revisits returns up to m frames that look most like frame k up to a
// translation: in k's own clip the local minima of the descriptor
// distance along time (row: d(k, ·), descDist) other than the one k sits
// in, in other clips any frame.
func revisits(row []float64, k int, clipOf []int, m int) []int {
	type cand struct {
		l int
		d float64
	}
	dist := func(l int) float64 { return row[l] }
	var cs []cand
	n := len(row)
	// Along k's clip: walk away from k while frames grow less alike; the
	// frames beyond are candidates where the distance has a local minimum.
	lo, hi := k, k
	for lo > 0 && clipOf[lo-1] == clipOf[k] {
		lo--
	}
	for hi+1 < n && clipOf[hi+1] == clipOf[k] {
		hi++
	}
	d := make([]float64, hi-lo+1)
	for l := lo; l <= hi; l++ {
		d[l-lo] = dist(l)
	}
	a, b := k-lo, k-lo
	for a > 0 && d[a-1] >= d[a] {
		a--
	}
	for b+1 < len(d) && d[b+1] >= d[b] {
		b++
	}
	for i := range d {
		if i >= a && i <= b {
			continue
		}
		if (i == 0 || d[i] <= d[i-1]) && (i == len(d)-1 || d[i] <= d[i+1]) {
			cs = append(cs, cand{lo + i, d[i]})
		}
	}
	for l := range n {
		if clipOf[l] != clipOf[k] {
			cs = append(cs, cand{l, dist(l)})
		}
	}
	slices.SortFunc(cs, func(x, y cand) int {
		switch {
		case x.d < y.d:
			return -1
		case x.d > y.d:
			return 1
		}
		return x.l - y.l
	})
	out := make([]int, 0, m)
	for _, c := range cs[:min(m, len(cs))] {
		out = append(out, c.l)
	}
	return out
}

// solve fits the shifts to the pairs, removes what the state explains and
// decides.
func solve(frames [][]float64, w, h int, pairs []pair, start []int, opt Options) *Track {
	n := len(frames)
	// Connected components of the weighted graph: each has its own
	// origin.
	comp := components(pairs, n)
	shat := fitShifts(pairs, n, comp)
	cam := slices.Clone(shat)
	ncomp := slices.Max(comp) + 1
	for c := range ncomp {
		var idx []int
		for k := range n {
			if comp[k] == c {
				idx = append(idx, k)
			}
		}
		removeState(cam, shat, idx, pairs, comp, c)
	}
	t := &Track{Source: SourceAuto}
	var lw, l2, d2 float64
	for _, p := range pairs {
		wt := p.weight()
		if wt == 0 {
			continue
		}
		e := shat[p.b].Sub(shat[p.a]).Sub(p.d)
		l2 += wt * (e.X*e.X + e.Y*e.Y)
		lw += wt
		// The evidence: two frames that a translation makes alike, and
		// that are not neighbours in time, show one state; what moved
		// between them is the camera.
		if p.revisit {
			t.Pairs++
			if p.r <= translationGain*p.r0 {
				d2 += p.d.X*p.d.X + p.d.Y*p.d.Y
				t.Moved++
			}
		}
	}
	if lw > 0 {
		t.Inconsistency = math.Sqrt(l2 / lw)
	}
	if t.Moved > 0 {
		t.Revisit = math.Sqrt(d2 / float64(2*t.Moved))
	}
	t.Shifts = make([][]Shift, len(start))
	for c := range start {
		end := n
		if c+1 < len(start) {
			end = start[c+1]
		}
		t.Shifts[c] = cam[start[c]:end]
	}
	var r2 float64
	for _, s := range cam {
		r2 += s.X*s.X + s.Y*s.Y
	}
	t.RMS = math.Sqrt(r2 / float64(n))
	switch {
	case t.Pairs == 0:
		t.Note = "no frame looks like another beyond its neighbours in time: the camera's motion cannot be told from the object's"
	case t.Moved < minPairs || float64(t.Moved) < minShare*float64(t.Pairs):
		t.Note = fmt.Sprintf("%d of %d pairs of frames alike up to a translation differ by one (need %d and %.0f%%): no camera motion", t.Moved, t.Pairs, minPairs, 100*minShare)
	case t.Revisit < opt.MinRevisit:
		t.Note = fmt.Sprintf("frames in one state are %.2g px apart (rms), below %.2g: no camera motion to remove", t.Revisit, opt.MinRevisit)
	default:
		t.Detected = true
		if t.Left = leftMoving(frames, cam, w, h); t.Left < minLeft {
			t.Ambiguous = true
			t.Note = fmt.Sprintf("the whole view moves as one: with the camera's measured motion removed, %.0f%% of the frames' variation is left; the camera's motion cannot be told from the object's", 100*t.Left)
			break
		}
		t.Applied = true
	}
	return t
}

// Decision constants of Measure.
const (
	// translationGain: a pair whose residual once aligned is at most this
	// fraction of its residual unmoved differs by a translation (95 % of
	// the difference explained): unlike two frames in different states, a
	// moving distractor or a change of light.
	translationGain = 0.05
	// minPairs and minShare: camera motion moves every frame, so it shows
	// in many of the pairs, at least minPairs and a share minShare of
	// them; a distractor that happens to move rigidly between two frames
	// makes a few.
	minPairs = 3
	minShare = 0.2
	// minLeft: when removing the measured motion leaves less than this
	// fraction of the frames' variation (interior pixels), the whole view
	// moves rigidly, and a camera moving over a still object cannot be
	// told from an object moving before a still camera.
	minLeft = 0.1
)

// leftMoving is the fraction of the frames' variation over time that is
// left once each frame is moved back by its shift, on the pixels that no
// shift brings in from beyond the border.
func leftMoving(frames [][]float64, cam []Shift, w, h int) float64 {
	var m float64
	for _, s := range cam {
		m = max(m, math.Abs(s.X), math.Abs(s.Y))
	}
	mg := int(math.Ceil(m)) + 2
	if 2*mg >= min(w, h) {
		return 1
	}
	variation := func(get func(k int) []float64) float64 {
		mean := make([]float64, w*h)
		for k := range frames {
			for i, v := range get(k) {
				mean[i] += v
			}
		}
		for i := range mean {
			mean[i] /= float64(len(frames))
		}
		var s float64
		for k := range frames {
			f := get(k)
			for y := mg; y < h-mg; y++ {
				for x := mg; x < w-mg; x++ {
					e := f[y*w+x] - mean[y*w+x]
					s += e * e
				}
			}
		}
		return s
	}
	before := variation(func(k int) []float64 { return frames[k] })
	moved := make([][]float64, len(frames))
	for k, f := range frames {
		moved[k] = Undo(f, w, h, cam[k])
	}
	after := variation(func(k int) []float64 { return moved[k] })
	if !(before > 0) {
		return 1
	}
	return after / before
}

// components labels the connected components of the graph of weighted
// pairs, from 0 in order of their first frame.
func components(pairs []pair, n int) []int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, p := range pairs {
		if p.weight() > 0 {
			a, b := find(p.a), find(p.b)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	label := make(map[int]int)
	comp := make([]int, n)
	for k := range n {
		r := find(k)
		if _, ok := label[r]; !ok {
			label[r] = len(label)
		}
		comp[k] = label[r]
	}
	return comp
}

// fitShifts solves min Σ w_p |ŝ_b − ŝ_a − d_p|² with each component's
// shifts summing to zero.
func fitShifts(pairs []pair, n int, comp []int) []Shift {
	L := mat.NewSymDense(n, nil)
	bx, by := make([]float64, n), make([]float64, n)
	var wmax float64
	for _, p := range pairs {
		w := p.weight()
		if w == 0 {
			continue
		}
		wmax = max(wmax, w)
		L.SetSym(p.a, p.a, L.At(p.a, p.a)+w)
		L.SetSym(p.b, p.b, L.At(p.b, p.b)+w)
		L.SetSym(p.a, p.b, L.At(p.a, p.b)-w)
		bx[p.b] += w * p.d.X
		bx[p.a] -= w * p.d.X
		by[p.b] += w * p.d.Y
		by[p.a] -= w * p.d.Y
	}
	// The Laplacian is singular along each component's constant; a
	// small ridge picks the zero-mean solution's neighbourhood, and the
	// means are removed below.
	ridge := 1e-9 * max(wmax, 1)
	for k := range n {
		L.SetSym(k, k, L.At(k, k)+ridge)
	}
	out := make([]Shift, n)
	var ch mat.Cholesky
	if !ch.Factorize(L) {
		return out
	}
	var x, y mat.VecDense
	if ch.SolveVecTo(&x, mat.NewVecDense(n, bx)) != nil || ch.SolveVecTo(&y, mat.NewVecDense(n, by)) != nil {
		return out
	}
	for k := range n {
		out[k] = Shift{x.AtVec(k), y.AtVec(k)}
	}
	ncomp := slices.Max(comp) + 1
	sum := make([]Shift, ncomp)
	cnt := make([]float64, ncomp)
	for k, s := range out {
		sum[comp[k]] = sum[comp[k]].Add(s)
		cnt[comp[k]]++
	}
	for k := range out {
		c := comp[k]
		out[k] = out[k].Sub(Shift{sum[c].X / cnt[c], sum[c].Y / cnt[c]})
	}
	return out
}

// removeState sets cam over the frames idx of component c to shat minus
// its least-squares cubic in the component's Fiedler vector: the part of
// the fitted motion that the state, as the pairs' graph orders the
// frames, explains.
func removeState(cam, shat []Shift, idx []int, pairs []pair, comp []int, c int) {
	m := len(idx)
	if m < 8 {
		return
	}
	pos := make(map[int]int, m)
	for i, k := range idx {
		pos[k] = i
	}
	f := fiedler(m, pos, pairs, comp, c)
	if f == nil {
		return
	}
	var sd float64
	for i := range m {
		sd += f[i] * f[i]
	}
	sd = math.Sqrt(sd / float64(m))
	if !(sd > 0) {
		return
	}
	const deg = 3
	X := mat.NewDense(m, deg+1, nil)
	for i := range m {
		u, p := f[i]/sd, 1.0
		for j := 0; j <= deg; j++ {
			X.Set(i, j, p)
			p *= u
		}
	}
	var qr mat.QR
	qr.Factorize(X)
	for axis := range 2 {
		y := mat.NewVecDense(m, nil)
		for i, k := range idx {
			if axis == 0 {
				y.SetVec(i, shat[k].X)
			} else {
				y.SetVec(i, shat[k].Y)
			}
		}
		var beta, fit mat.VecDense
		if qr.SolveVecTo(&beta, false, y) != nil {
			return
		}
		fit.MulVec(X, &beta)
		for i, k := range idx {
			if axis == 0 {
				cam[k].X = shat[k].X - fit.AtVec(i)
			} else {
				cam[k].Y = shat[k].Y - fit.AtVec(i)
			}
		}
	}
}

// fiedler returns the Fiedler vector of component c (m frames, numbered
// by pos): the eigenvector of the second smallest eigenvalue of the
// Laplacian of the graph whose edges are the pairs that were measured,
// each of weight 1. It is the smoothest non-constant function on the
// graph; as a frame's edges join it to its neighbours in time and to the
// frames in its state, it orders the frames by state. (Weighting the
// edges by how alike the frames look makes it a staircase: tight clusters
// of near-identical frames, steps between them.) nil if the
// decomposition fails.
func fiedler(m int, pos map[int]int, pairs []pair, comp []int, c int) []float64 {
	L := make([]float64, m*m) // upper triangle, row-major
	for _, p := range pairs {
		if p.weight() == 0 || comp[p.a] != c {
			continue
		}
		i, j := pos[p.a], pos[p.b]
		L[i*m+i]++
		L[j*m+j]++
		L[min(i, j)*m+max(i, j)]--
	}
	// Only the eigenvector of the second smallest eigenvalue is needed
	// (symeig: about a sixth of the full decomposition's work; m is a
	// window's frames).
	f := make([]float64, m)
	var ws symeig.Work
	if _, ok := ws.Pair(L, m, 1, f); !ok {
		return nil
	}
	return f
}

// still is the relative residual of b against a without moving either:
// Σ (b − a)² over b's variance, on the smoothed frames.
func still(a, b *prepared) float64 {
	var rr, bb, bm float64
	for i, v := range b.sm {
		r := v - a.sm[i]
		rr += r * r
		bb += v * v
		bm += v
	}
	n := float64(len(b.sm))
	varB := bb - bm*bm/n
	if !(varB > 1e-12) {
		return math.NaN()
	}
	return rr / varB
}
