package tracker

import (
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/order"
)

// Box is a rectangle in the clips' pixels: top-left (X, Y), size W×H.
type Box struct{ X, Y, W, H int }

// seed is an object found in a frame: its template's box and,
// when only part of the box is the object, which pixels are (row-major
// over the box; nil: all of them).
type seed struct {
	box  Box
	mask []bool
}

// backgroundFrames is the most frames the median background and the
// activity map are computed from, spread evenly over the window.
const backgroundFrames = 101

// background returns the per-pixel median over (up to backgroundFrames
// of) the frames of every clip — what the scene looks like where the
// object is not, for an object that visits each pixel less than half
// the time — and each pixel's temporal standard deviation over the same
// frames: where something moves.
func background(clips []estimator.Clip) (bg, act []float64) {
	var frames [][]float64
	for _, c := range clips {
		frames = append(frames, c.Frames...)
	}
	stride := max(1, (len(frames)+backgroundFrames-1)/backgroundFrames)
	var pick [][]float64
	for i := 0; i < len(frames); i += stride {
		pick = append(pick, frames[i])
	}
	p, m := len(pick[0]), len(pick)
	bg, act = make([]float64, p), make([]float64, p)
	// The pixels' columns are gathered colBlock pixels at a time: one
	// pixel per frame would read a cache line of every frame for each
	// pixel.
	cols := make([]float64, colBlock*m)
	for j0 := 0; j0 < p; j0 += colBlock {
		b := min(colBlock, p-j0)
		for i, f := range pick {
			for q, v := range f[j0 : j0+b] {
				cols[q*m+i] = v
			}
		}
		for q := range b {
			col := cols[q*m : (q+1)*m]
			var s, s2 float64
			for _, v := range col {
				s += v
				s2 += v * v
			}
			n := float64(m)
			act[j0+q] = math.Sqrt(math.Max(0, s2/n-(s/n)*(s/n)))
			bg[j0+q] = order.Select(col, m/2) // the sorted column's middle, without the sort
		}
	}
	return bg, act
}

// colBlock is how many pixels' columns background gathers at once.
const colBlock = 16

// blur3 is the 3×3 box mean of f (w×h), edges replicated.
func blur3(f []float64, w, h int) []float64 {
	out := make([]float64, len(f))
	for y := range h {
		for x := range w {
			var s float64
			for dy := -1; dy <= 1; dy++ {
				yy := min(h-1, max(0, y+dy))
				for dx := -1; dx <= 1; dx++ {
					s += f[yy*w+min(w-1, max(0, x+dx))]
				}
			}
			out[y*w+x] = s / 9
		}
	}
	return out
}

// seeds finds up to n objects in frame f0 (w×h): blobs where
// f0 differs from the background bg, ranked by that difference times
// the square root of the pixels' activity (a moving object's pixels
// change over the window; a parked one's do not), each returned as its
// bounding box padded by two pixels (compact: without its thin parts).
// A later object must score at least a third of the first and lie
// outside the earlier boxes.
func seeds(f0, bg, act []float64, w, h, n int) []seed {
	d := make([]float64, len(f0))
	for j := range f0 {
		d[j] = math.Abs(f0[j] - bg[j])
	}
	d = blur3(d, w, h)
	score := make([]float64, len(d))
	for j := range d {
		score[j] = d[j] * math.Sqrt(act[j])
	}
	taken := make([]bool, len(d))
	var out []seed
	var first float64
	for len(out) < n {
		best := -1
		for j, s := range score {
			if !taken[j] && (best < 0 || s > score[best]) {
				best = j
			}
		}
		if best < 0 || !(score[best] > 0) || (first > 0 && score[best] < first/3) {
			break
		}
		if first == 0 {
			first = score[best]
		}
		thr := 0.4 * d[best]
		whole := blob(d, w, h, best, thr)
		s := compact(d, w, h, whole, best, thr)
		taken[best] = true // even when the box is capped away from it
		for y := whole.Y; y < whole.Y+whole.H; y++ {
			for x := whole.X; x < whole.X+whole.W; x++ {
				taken[y*w+x] = true
			}
		}
		if s.box.W >= minTemplate && s.box.H >= minTemplate {
			out = append(out, s)
		}
	}
	return out
}

// minTemplate is the smallest template side, px: fewer pixels do not
// pin a position to a fraction of one.
const minTemplate = 5

// blob is the bounding box of the 4-connected pixels around seed where
// d ≥ thr, capped at three quarters of the frame in each direction so
// the template has room to move.
func blob(d []float64, w, h, seed int, thr float64) Box {
	seen := map[int]bool{seed: true}
	stack := []int{seed}
	x0, y0, x1, y1 := seed%w, seed/w, seed%w, seed/w
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := j%w, j/w
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		for _, n := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
			if n[0] < 0 || n[0] >= w || n[1] < 0 || n[1] >= h {
				continue
			}
			k := n[1]*w + n[0]
			if !seen[k] && d[k] >= thr {
				seen[k] = true
				stack = append(stack, k)
			}
		}
	}
	b := Box{x0, y0, x1 - x0 + 1, y1 - y0 + 1}
	cx, cy := seed%w, seed/w
	if mw := 3 * w / 4; b.W > mw {
		b.X, b.W = min(max(0, cx-mw/2), w-mw), mw
	}
	if mh := 3 * h / 4; b.H > mh {
		b.Y, b.H = min(max(0, cy-mh/2), h-mh), mh
	}
	return b
}

// compact is the template of a blob (its box b around the seed pixel,
// d ≥ thr): the mask opened by a 3×3 square — eroded, then dilated —
// which removes every part less than three pixels wide, the rod of a
// pendulum or the string of a bead, so the template is the bob and does
// not turn with the rod. The part kept is the opened component nearest
// the seed, grown by two pixels of its surroundings (its edges are what
// pins its position). A blob thin everywhere keeps its whole box.
func compact(d []float64, w, h int, b Box, seed int, thr float64) seed {
	in := func(x, y int) bool {
		return x >= b.X && x < b.X+b.W && y >= b.Y && y < b.Y+b.H && d[y*w+x] >= thr
	}
	// Opening: a pixel is kept when some 3×3 square inside the mask
	// covers it; eroded marks the centres of such squares.
	eroded := make([]bool, b.W*b.H)
	any := false
	for y := b.Y; y < b.Y+b.H; y++ {
		for x := b.X; x < b.X+b.W; x++ {
			ok := true
			for dy := -1; dy <= 1 && ok; dy++ {
				for dx := -1; dx <= 1 && ok; dx++ {
					ok = in(x+dx, y+dy)
				}
			}
			eroded[(y-b.Y)*b.W+x-b.X] = ok
			any = any || ok
		}
	}
	if !any {
		return seedOf(pad(b, 2, w, h), nil)
	}
	opened := dilate(eroded, b.W, b.H, 1)
	// The opened pixel nearest the seed starts the component kept.
	sx, sy := seed%w-b.X, seed/w-b.Y
	start, bestD := -1, math.Inf(1)
	for j, ok := range opened {
		if ok {
			if dd := math.Hypot(float64(j%b.W-sx), float64(j/b.W-sy)); dd < bestD {
				start, bestD = j, dd
			}
		}
	}
	part := make([]bool, len(opened))
	part[start] = true
	stack := []int{start}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := j%b.W, j/b.W
		for _, n := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
			if n[0] < 0 || n[0] >= b.W || n[1] < 0 || n[1] >= b.H {
				continue
			}
			if k := n[1]*b.W + n[0]; opened[k] && !part[k] {
				part[k] = true
				stack = append(stack, k)
			}
		}
	}
	// Re-frame the part in a box padded by two pixels, then grow the
	// mask by the same two pixels inside it.
	x0, y0, x1, y1 := b.W, b.H, -1, -1
	for j, ok := range part {
		if ok {
			x0, y0, x1, y1 = min(x0, j%b.W), min(y0, j/b.W), max(x1, j%b.W), max(y1, j/b.W)
		}
	}
	pb := pad(Box{b.X + x0, b.Y + y0, x1 - x0 + 1, y1 - y0 + 1}, 2, w, h)
	m := make([]bool, pb.W*pb.H)
	for j, ok := range part {
		if x, y := b.X+j%b.W-pb.X, b.Y+j/b.W-pb.Y; ok && x >= 0 && x < pb.W && y >= 0 && y < pb.H {
			m[y*pb.W+x] = true
		}
	}
	// The thin parts cut off stay out of the template: where the rod
	// meets the bob differs from frame to frame.
	grown := dilate(m, pb.W, pb.H, ring)
	for j := range grown {
		x, y := pb.X+j%pb.W, pb.Y+j/pb.W
		if grown[j] && !m[j] && in(x, y) {
			grown[j] = false
		}
	}
	return seedOf(pb, grown)
}

// ring is how far, px, a compact template reaches beyond the object.
const ring = 2

// seedOf is the seed of box b with mask m, nil when m covers the box.
func seedOf(b Box, m []bool) seed {
	for _, ok := range m {
		if !ok {
			return seed{b, m}
		}
	}
	return seed{box: b}
}

// dilate grows mask m (w×h) by r pixels: a (2r+1)² square.
func dilate(m []bool, w, h, r int) []bool {
	out := make([]bool, len(m))
	for j, ok := range m {
		if !ok {
			continue
		}
		x, y := j%w, j/w
		for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
			for xx := max(0, x-r); xx <= min(w-1, x+r); xx++ {
				out[yy*w+xx] = true
			}
		}
	}
	return out
}

// pad grows b by p on every side, within the w×h frame and no larger
// than three quarters of it.
func pad(b Box, p, w, h int) Box {
	x0, y0 := max(0, b.X-p), max(0, b.Y-p)
	x1, y1 := min(w, b.X+b.W+p), min(h, b.Y+b.H+p)
	b = Box{x0, y0, x1 - x0, y1 - y0}
	b.W = min(b.W, max(1, 3*w/4))
	b.H = min(b.H, max(1, 3*h/4))
	return b
}
