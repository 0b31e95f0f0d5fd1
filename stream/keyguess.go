package stream

import (
	"slices"
)

// Thresholds of keyGuesser, measured on H.264 free decays rendered by
// package sim (320×240, pixel noise 0.01, CRF 18 to 38, GOP 30 and 250,
// objects moving 0.5 to 12 px), against the frame types libavcodec
// reports for the same files: at every key frame 98–100 % of the 16×16
// blocks changed by at least one gray level on average, at every other
// frame at most 80 % (CRF 18, where the encoder codes the pixel noise) and
// typically 4–15 %.
const (
	// guessBlock is the side of the blocks whose change is counted: an
	// H.264 macroblock, the unit an encoder skips or codes.
	guessBlock = 16
	// guessChanged is the mean |ΔY| over a block, in 8-bit gray levels,
	// from which the block counts as changed.
	guessChanged = 1.0
	// guessSpread is the least fraction of blocks a key frame changes.
	guessSpread = 0.9
	// guessQuiet is the most blocks, as a fraction, the recent frames
	// change in the median for a re-coding of the whole picture to stand
	// out: in a stream that codes most blocks every frame (pixel noise at a
	// low CRF) a key frame does not.
	guessQuiet = 0.5
	// guessMeanLevels and guessMeanFactor make a step in the picture's
	// mean gray level (brightness pumping) stand out in such a stream: at
	// least guessMeanLevels gray levels and guessMeanFactor times the
	// recent frames' median step.
	guessMeanLevels = 2.0
	guessMeanFactor = 8.0
	// guessHistory is how many frames' statistics a guess is judged
	// against, and guessMinHistory how many it needs first.
	guessHistory    = 64
	guessMinHistory = 8
)

// keyGuesser recognises likely key frames of a source that does not tell
// frame types (OpenCV's capture), from the pictures alone: a key frame
// re-codes every block of the picture afresh, so its difference from the
// previous picture changes nearly every block (and may step the whole
// picture's brightness, "keyframe pumping"), while the frames between key
// frames re-code only what moved. A picture is a likely key frame when
//
//   - at least guessSpread of its 16×16 blocks (aligned with the
//     picture's origin, as the codec's are) changed by guessChanged gray
//     levels or more on average since the previous picture, and
//   - either the recent frames changed at most guessQuiet of the blocks in
//     the median, or the picture's mean gray level stepped by at least
//     guessMeanLevels and guessMeanFactor times the recent frames' median
//     step.
//
// It is conservative: a knock on a structure moves the object, which
// changes the blocks it covers, not every block of the picture. A scene
// that changes everywhere at once (a light switched on, an exposure step)
// is guessed a key frame too; it is no motion either. A picture without a
// contiguous predecessor (the first, one after a gap in Seq, or after a
// change of size) and the first guessMinHistory pictures of a run are not
// judged. The zero value is ready to use; not safe for concurrent use.
type keyGuesser struct {
	prev   []byte // the previous picture's luma, tightly packed
	w, h   int
	seq    int // the previous picture's Seq
	have   bool
	spread []float64 // recent frames' fraction of changed blocks, oldest first
	steps  []float64 // recent frames' |mean step|, gray levels
	blocks []float64 // per block column: Σ|ΔY| of the current block row
}

// observe takes picture seq, w×h 8-bit luma rows stride bytes apart, and
// reports whether it is a likely key frame.
func (g *keyGuesser) observe(seq int, pix []byte, w, h, stride int) bool {
	if w <= 0 || h <= 0 || stride < w || len(pix) < stride*(h-1)+w {
		g.have = false
		return false
	}
	contiguous := g.have && seq == g.seq+1 && w == g.w && h == g.h
	guess := false
	if contiguous {
		spread, step := g.compare(pix, stride)
		guess = g.judge(spread, step)
		g.spread = appendRecent(g.spread, spread)
		g.steps = appendRecent(g.steps, step)
	} else {
		g.spread, g.steps = g.spread[:0], g.steps[:0]
	}
	if cap(g.prev) < w*h {
		g.prev = make([]byte, w*h)
	}
	g.prev = g.prev[:w*h]
	for y := range h {
		copy(g.prev[y*w:(y+1)*w], pix[y*stride:y*stride+w])
	}
	g.w, g.h, g.seq, g.have = w, h, seq, true
	return guess
}

// compare returns the fraction of blocks that changed from g.prev to pix
// (same size) and the absolute step in the mean gray level.
func (g *keyGuesser) compare(pix []byte, stride int) (spread, step float64) {
	w, h := g.w, g.h
	cols := (w + guessBlock - 1) / guessBlock
	if cap(g.blocks) < cols {
		g.blocks = make([]float64, cols)
	}
	g.blocks = g.blocks[:cols]
	var sum float64
	changed, total := 0, 0
	for y0 := 0; y0 < h; y0 += guessBlock {
		clear(g.blocks)
		y1 := min(y0+guessBlock, h)
		for y := y0; y < y1; y++ {
			cur, old := pix[y*stride:y*stride+w], g.prev[y*w:(y+1)*w]
			for x0 := 0; x0 < w; x0 += guessBlock {
				var s, a int
				for x := x0; x < min(x0+guessBlock, w); x++ {
					d := int(cur[x]) - int(old[x])
					s += d
					a += max(d, -d)
				}
				sum += float64(s)
				g.blocks[x0/guessBlock] += float64(a)
			}
		}
		for c, a := range g.blocks {
			n := float64((y1 - y0) * (min((c+1)*guessBlock, w) - c*guessBlock))
			if a >= guessChanged*n {
				changed++
			}
			total++
		}
	}
	step = sum / float64(w*h)
	return float64(changed) / float64(total), max(step, -step)
}

// judge applies keyGuesser's rule to a picture's statistics against the
// recent frames'.
func (g *keyGuesser) judge(spread, step float64) bool {
	if len(g.spread) < guessMinHistory || spread < guessSpread {
		return false
	}
	if median(g.spread) <= guessQuiet {
		return true
	}
	return step >= guessMeanLevels && step >= guessMeanFactor*median(g.steps)
}

// appendRecent appends v to s, keeping the last guessHistory values.
func appendRecent(s []float64, v float64) []float64 {
	if len(s) == guessHistory {
		copy(s, s[1:])
		s = s[:len(s)-1]
	}
	return append(s, v)
}

// median is the median of s (not modified); 0 for an empty s.
func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}
