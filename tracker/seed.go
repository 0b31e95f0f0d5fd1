package tracker

import (
	"math"
	"slices"

	"github.com/physd/physd/estimator"
)

// Box is a rectangle in the clips' pixels: top-left (X, Y), size W×H.
type Box struct{ X, Y, W, H int }

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
	p := len(pick[0])
	bg, act = make([]float64, p), make([]float64, p)
	col := make([]float64, len(pick))
	for j := range p {
		var s, s2 float64
		for i, f := range pick {
			col[i] = f[j]
			s += f[j]
			s2 += f[j] * f[j]
		}
		n := float64(len(pick))
		act[j] = math.Sqrt(math.Max(0, s2/n-(s/n)*(s/n)))
		slices.Sort(col)
		bg[j] = col[len(col)/2]
	}
	return bg, act
}

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

// seeds finds up to n objects in the first frame f0 (w×h): blobs where
// f0 differs from the background bg, ranked by that difference times
// the square root of the pixels' activity (a moving object's pixels
// change over the window; a parked one's do not), each returned as its
// bounding box padded by two pixels. A later object must score at least
// a third of the first and lie outside the earlier boxes.
func seeds(f0, bg, act []float64, w, h, n int) []Box {
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
	var boxes []Box
	var first float64
	for len(boxes) < n {
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
		b := blob(d, w, h, best, 0.4*d[best])
		b = pad(b, 2, w, h)
		taken[best] = true // even when the box is capped away from it
		for y := b.Y; y < b.Y+b.H; y++ {
			for x := b.X; x < b.X+b.W; x++ {
				taken[y*w+x] = true
			}
		}
		if b.W >= minTemplate && b.H >= minTemplate {
			boxes = append(boxes, b)
		}
	}
	return boxes
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
