package window

import (
	"time"

	"github.com/physd/physd/frame"
)

// Binner decimates one camera's frames by N in time: every Nth frame
// becomes a bin, the weighted mean of the 2N−1 frames around it with the
// triangular weights
//
//	w_j = (N − |j|) / N²,  j = −(N−1) … N−1,  Σ w_j = 1,
//
// so a 30 fps camera is analysed at 30/N frames a second for about 1/N of
// the per-window work (every step past decoding reads each frame of each
// window).
//
// Binning keeps the physics exactly. A free response is
// z(t) = Σ_i c_i e^{λ_i t}, λ_i the roots of λ² + γ1 λ + γ0; any fixed
// weights over samples Δt apart give
//
//	Σ_j w_j z(t + jΔt) = Σ_i c_i (Σ_j w_j e^{λ_i jΔt}) e^{λ_i t},
//
// again a free response of the same ODE (other constants c_i), so
// (γ1, γ0) are unchanged; a readout linear in the pixels (the small-motion
// readout, sub-pixel images) reads the binned displacement exactly, and
// white pixel noise falls (its variance by Σ w_j² = (2N²+1)/(3N³), 0.23
// for N = 3; neighbouring bins share N−1 frames, a noise correlation of
// about 0.2).
//
// Why triangular weights and not a plain mean of N frames: decimation
// folds motion near a multiple k·fps/N of the bins' rate into the band
// near 0 where modes are fitted. The triangle is a mean of N convolved
// with itself, so its gain, (sin(πfNΔt) / (N sin(πfΔt)))², is the mean's
// squared: motion within fps/(8N) of fps/N — what would fold into the
// band physd resolves at the binned step (eight samples a period,
// estimator.MaxOmega) — is attenuated at least 28 dB for N = 2 and 31 dB
// for N ≥ 3, where a mean of N frames gives 14–16 dB
// (TestBinFoldsLittle). What it costs:
// samples per period (N times fewer: the mode must stay well below the
// binned rate; AutoBin keeps sixteen a period) and latency (a bin is
// complete N−1 frames after its centre).
//
// A bin's frame carries the weighted mean of its frames' pixels (Pix,
// Ref) and times (Time, Wall: its centre frame's for even spacing), the
// decode and preprocessing times of the N frames it consumes; Seq counts
// bins (a dropped input frame shows as a jump, so the Slicer breaks its
// windows there too); Key is set when any frame it weighs is a key frame.
// A bin never spans a jump in Seq, a gap in time (a step longer than
// 1.5 times the median of the recent steps: the Slicer's rule for a
// break, which a bin would otherwise hide — a sender that drops a
// picture before encoding leaves Seq whole and the time short a step, and
// the bins' steps stretch by a fraction of it, within the jitter the
// Slicer allows, while the window's frames leave the even grid its
// differences assume), a change of frame size, or a frame without
// pixels: the frames gathered are dropped (Dropped counts those no bin
// has consumed), binning starts again at the frame that broke it, and a
// gap or a jump in Seq makes a jump in the bins' Seq.
type Binner struct {
	n   int
	acc []frame.Frame
	w   []float64
	// seq is the next bin's Seq; lastIn the last input frame's, at
	// lastTime.
	seq, lastIn int
	lastTime    time.Duration
	started     bool
	// steps are the recent input steps, for the nominal step gaps are
	// judged against; gap marks one before the next bin.
	steps recentSteps
	gap   bool
	// Dropped counts the input frames gathered but not consumed by a bin
	// when binning started again.
	Dropped int
}

// NewBinner returns a Binner of n frames a bin; n ≤ 1 passes frames
// through as they are.
func NewBinner(n int) *Binner {
	n = max(n, 1)
	w := make([]float64, 2*n-1)
	for j := range w {
		w[j] = float64(n-max(j-(n-1), n-1-j)) / float64(n*n)
	}
	return &Binner{n: n, w: w}
}

// N is the decimation: how many camera frames a bin stands for.
func (b *Binner) N() int { return b.n }

// Push adds a frame and returns the bin it completes, if any.
func (b *Binner) Push(f frame.Frame) (frame.Frame, bool) {
	if b.n == 1 {
		return f, true
	}
	if b.started && f.Seq == b.lastIn+1 {
		step := f.Time - b.lastTime
		if nom := b.steps.median(); nom > 0 && float64(step) > defaultMaxGap*float64(nom) {
			b.restart()
			b.gap = true
		} else if step > 0 {
			b.steps.add(step)
		}
	}
	if len(b.acc) > 0 {
		last := b.acc[len(b.acc)-1]
		if f.Seq != last.Seq+1 || f.W != last.W || f.H != last.H || len(f.Ref) != len(last.Ref) {
			b.restart()
		}
	}
	if len(f.Pix) == 0 {
		// Nothing to average (a zone's whole picture before its cut): the
		// caller should not bin such frames; count it and start again.
		b.restart()
		b.Dropped++
		return frame.Frame{}, false
	}
	if b.started && len(b.acc) == 0 {
		// Bins follow on from the last input frame; a jump in the input's
		// Seq makes a jump of at least one in the bins'.
		if gap := f.Seq - b.lastIn - 1; gap > 0 {
			b.seq += 1 + (gap-1)/b.n
		} else if b.gap {
			b.seq++
		}
		b.gap = false
	}
	b.lastIn, b.lastTime, b.started = f.Seq, f.Time, true
	b.acc = append(b.acc, f)
	if len(b.acc) < len(b.w) {
		return frame.Frame{}, false
	}
	out := b.bin()
	// The last N−1 frames are the next bin's first.
	b.acc = append(b.acc[:0], b.acc[b.n:]...)
	return out, true
}

// restart drops the frames gathered.
func (b *Binner) restart() {
	b.Dropped += len(b.acc)
	clear(b.acc)
	b.acc = b.acc[:0]
}

// bin is the bin of b.acc, 2N−1 frames of one size; it consumes the
// first N.
func (b *Binner) bin() frame.Frame {
	centre := b.acc[b.n-1]
	out := centre
	out.Seq = b.seq
	b.seq++
	out.Gray = nil
	out.Pix = weighPix(b.acc, b.w, func(f frame.Frame) []float64 { return f.Pix })
	if len(centre.Ref) > 0 {
		out.Ref = weighPix(b.acc, b.w, func(f frame.Frame) []float64 { return f.Ref })
	}
	var dt, dw float64
	out.Key, out.KeyKnown, out.KeyGuessed = false, true, false
	out.Decode, out.Preprocess = 0, 0
	for j, f := range b.acc {
		dt += b.w[j] * float64(f.Time-centre.Time)
		dw += b.w[j] * float64(f.Wall.Sub(centre.Wall))
		out.Key = out.Key || f.Key
		out.KeyKnown = out.KeyKnown && f.KeyKnown
		out.KeyGuessed = out.KeyGuessed || f.KeyGuessed
		if j < b.n {
			out.Decode += f.Decode
			out.Preprocess += f.Preprocess
		}
	}
	out.Time = centre.Time + time.Duration(dt)
	out.Wall = centre.Wall.Add(time.Duration(dw))
	return out
}

// weighPix is Σ_j w_j pix(fs[j]), pixelwise, into a new slice (windows
// keep frames, so a bin's pixels are its own).
func weighPix(fs []frame.Frame, w []float64, pix func(frame.Frame) []float64) []float64 {
	out := make([]float64, len(pix(fs[0])))
	for j, f := range fs {
		wj := w[j]
		p := pix(f)[:len(out)]
		for i, v := range p {
			out[i] += wj * v
		}
	}
	return out
}
