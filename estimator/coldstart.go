package estimator

// coldBackoff decides when a learner whose warm encoder was refused tries
// a cold start. A cold start costs several times a warm window (the
// closed form and its training steps on top of the warm attempt), and on
// a scene that is not certifiable — no motion, one swing, a stuck cart —
// it is refused every time, so cold starts are held back (backoff) on
// windows whose motion energy lies within the range of the refused ones'
// since the count began. A range, not the last refused window's energy
// alone: a scene that goes back and forth between two levels of motion
// (a passer-by now and then, a recording's loop) re-armed a cold start
// at every change.
//
// A certified window ends the count but not its memory: when the warm
// encoder is refused again at a motion energy inside the range where the
// last count's cold starts were refused, the count resumes where it
// stood instead of starting anew with two tries at once. A scene whose
// certifiable stretches alternate with stretches of motion the learner
// cannot certify (free decay between excitations: forced motion is no
// free response) otherwise paid two or more refused cold starts at every
// excitation.
type coldBackoff struct {
	backoff
	// last is the count a certified window ended (refused ≥ 2 when
	// kept; held 0).
	last backoff
}

// hold tells whether the cold start of a window with motion energy e is
// held back, and counts it if so.
func (b *coldBackoff) hold(e float64) bool {
	if b.refused == 0 && b.last.refused >= 2 && b.last.like(e) {
		b.refused, b.lo, b.hi = b.last.refused, b.last.lo, b.last.hi
	}
	return b.backoff.hold(e)
}

// tried records a cold start on a window of motion energy e, kept (its
// estimate accepted) or refused.
func (b *coldBackoff) tried(e float64, kept bool) {
	if kept {
		b.reset()
		return
	}
	b.refuse(e, everyRefused)
}

// reset is a certified window (a kept cold start is one): the next
// refusal starts the count anew, unless its motion energy lies in the
// range of the count it ends (kept if it had held cold starts back).
func (b *coldBackoff) reset() {
	last := b.last
	if b.refused >= 2 {
		last = backoff{refused: b.refused, lo: b.lo, hi: b.hi}
	}
	*b = coldBackoff{last: last}
}

// motionEnergy is the window's mean per-pixel temporal variance, each
// clip about its own mean frame:
//
//	E = Σ_m Σ_p Σ_k (x_mkp − x̄_mp)² / Σ_m (N_m·P),
//
// what moves in it, on the scale of its pixels.
func motionEnergy(clips []Clip) float64 {
	var s float64
	n := 0
	for _, c := range clips {
		if len(c.Frames) == 0 {
			continue
		}
		P := len(c.Frames[0])
		mean := make([]float64, P)
		for _, f := range c.Frames {
			for p := range min(P, len(f)) {
				mean[p] += f[p]
			}
		}
		inv := 1 / float64(len(c.Frames))
		for p := range mean {
			mean[p] *= inv
		}
		for _, f := range c.Frames {
			for p := range min(P, len(f)) {
				d := f[p] - mean[p]
				s += d * d
			}
			n += P
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
