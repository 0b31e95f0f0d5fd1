package window

import (
	"time"

	"github.com/physd/physd/frame"
)

// Binner averages each run of N consecutive frames of one camera into one
// frame: temporal binning, which analyses a 30 fps camera at 30/N frames a
// second for about 1/N of the per-window work (every step past decoding
// reads each frame of each window).
//
// Binning keeps the physics exactly. A free response is
// z(t) = Σ_i c_i e^{λ_i t}, λ_i the roots of λ² + γ1 λ + γ0; its mean over
// a bin of N samples Δt apart,
//
//	(1/N) Σ_{j<N} z(t + jΔt) = Σ_i c_i (1/N Σ_{j<N} e^{λ_i jΔt}) e^{λ_i t},
//
// is again a free response of the same ODE (other constants c_i), so
// (γ1, γ0) are unchanged; a readout linear in the pixels (the small-motion
// readout, sub-pixel images) reads the binned displacement exactly, and
// white pixel noise falls by √N. What it costs: samples per period (N
// times fewer: the mode must stay well below the binned Nyquist rate, fps
// / 2N), blur within the bin for a large fast swing, and aliasing: the
// mean of N frames is a weak low-pass (its gain at frequency f is
// |sin(πfNΔt) / (N sin(πfΔt))|, 0.54 for a 6 Hz mode with N = 3 at
// 30 fps), so anything in view moving faster than fps / 2N folds into
// the band at reduced amplitude.
//
// A bin's frame carries the mean of its frames' pixels (Pix, Ref), times
// (Time, Wall) and decode and preprocessing times' sum; Seq counts bins
// (a dropped input frame shows as a jump, so the Slicer breaks its
// windows there too); Key is set when any frame of the bin is a key frame.
// A bin never spans a jump in Seq, a change of frame size, or a frame
// without pixels: the partial bin is dropped (Dropped counts its frames)
// and binning starts again at the frame that broke it.
type Binner struct {
	n   int
	acc []frame.Frame
	// seq is the next bin's Seq; lastIn the last input frame's.
	seq, lastIn int
	started     bool
	// Dropped counts the input frames of partial bins dropped.
	Dropped int
}

// NewBinner returns a Binner of n frames a bin; n ≤ 1 passes frames
// through as they are.
func NewBinner(n int) *Binner { return &Binner{n: max(n, 1)} }

// N is the number of frames a bin averages.
func (b *Binner) N() int { return b.n }

// Push adds a frame and returns the bin it completes, if any.
func (b *Binner) Push(f frame.Frame) (frame.Frame, bool) {
	if b.n == 1 {
		return f, true
	}
	if len(b.acc) > 0 {
		last := b.acc[len(b.acc)-1]
		if f.Seq != last.Seq+1 || f.W != last.W || f.H != last.H || len(f.Ref) != len(last.Ref) {
			b.Dropped += len(b.acc)
			b.acc = b.acc[:0]
		}
	}
	if len(f.Pix) == 0 {
		// Nothing to average (a zone's whole picture before its cut): the
		// caller should not bin such frames; count it and start again.
		b.Dropped += len(b.acc) + 1
		b.acc = b.acc[:0]
		return frame.Frame{}, false
	}
	if b.started && len(b.acc) == 0 {
		// Bins follow on from the last input frame; a jump in the input's
		// Seq makes a jump of at least one in the bins'.
		if gap := f.Seq - b.lastIn - 1; gap > 0 {
			b.seq += 1 + (gap-1)/b.n
		}
	}
	b.lastIn, b.started = f.Seq, true
	b.acc = append(b.acc, f)
	if len(b.acc) < b.n {
		return frame.Frame{}, false
	}
	out := b.mean()
	b.acc = b.acc[:0]
	return out, true
}

// mean is the bin's frame: b.acc holds n frames of one size.
func (b *Binner) mean() frame.Frame {
	first := b.acc[0]
	out := first
	out.Seq = b.seq
	b.seq++
	out.Gray = nil
	out.Pix = averagePix(b.acc, func(f frame.Frame) []float64 { return f.Pix })
	if len(first.Ref) > 0 {
		out.Ref = averagePix(b.acc, func(f frame.Frame) []float64 { return f.Ref })
	}
	var dt, dw time.Duration
	out.Key, out.KeyKnown, out.KeyGuessed = false, true, false
	out.Decode, out.Preprocess = 0, 0
	for _, f := range b.acc {
		dt += f.Time - first.Time
		dw += f.Wall.Sub(first.Wall)
		out.Key = out.Key || f.Key
		out.KeyKnown = out.KeyKnown && f.KeyKnown
		out.KeyGuessed = out.KeyGuessed || f.KeyGuessed
		out.Decode += f.Decode
		out.Preprocess += f.Preprocess
	}
	n := time.Duration(len(b.acc))
	out.Time = first.Time + dt/n
	out.Wall = first.Wall.Add(dw / n)
	return out
}

// averagePix is the pixelwise mean of what pix reads of each frame, into
// a new slice (windows keep frames, so a bin's pixels are its own).
func averagePix(fs []frame.Frame, pix func(frame.Frame) []float64) []float64 {
	out := make([]float64, len(pix(fs[0])))
	for _, f := range fs {
		for i, v := range pix(f) {
			out[i] += v
		}
	}
	inv := 1 / float64(len(fs))
	for i := range out {
		out[i] *= inv
	}
	return out
}
