package estimator

// coldBackoff decides when a learner whose warm encoder was refused tries
// a cold start. A cold start costs several times a warm window (the
// closed form and its training steps on top of the warm attempt), and on
// a scene that is not certifiable — no motion, one swing, a stuck cart —
// it is refused every time. After two refused cold starts in a row on
// windows of like motion, the next ones are held back for 1, 2, 4, then
// at most maxColdHold windows between tries; a certified window, or a
// window whose motion energy lies more than coldEnergyRatio outside the
// range of the refused ones' since the count began, tries again at once.
// A range, not the last refused window's energy alone: a scene that goes
// back and forth between two levels of motion (a passer-by now and then,
// a recording's loop) re-armed a cold start at every change.
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
	// refused counts the cold starts refused in a row; held the windows
	// held back since the last try; [lo, hi] the motion energies of the
	// windows those cold starts ran on.
	refused, held int
	lo, hi        float64
	// last is the count a certified window ended (refused ≥ 2 when kept).
	last struct {
		refused int
		lo, hi  float64
	}
}

const (
	// maxColdHold is the most windows held back between cold starts.
	maxColdHold = 8
	// coldEnergyRatio is the change of motion energy, either way, that
	// counts as a new scene.
	coldEnergyRatio = 2.0
)

// hold tells whether the cold start of a window with motion energy e is
// held back, and counts it if so.
func (b *coldBackoff) hold(e float64) bool {
	if b.refused == 0 && b.last.refused >= 2 && e <= coldEnergyRatio*b.last.hi && e*coldEnergyRatio >= b.last.lo {
		b.refused, b.lo, b.hi = b.last.refused, b.last.lo, b.last.hi
	}
	if b.refused < 2 || !(e <= coldEnergyRatio*b.hi && e*coldEnergyRatio >= b.lo) {
		return false
	}
	if b.held >= min(1<<(b.refused-2), maxColdHold) {
		return false
	}
	b.held++
	return true
}

// tried records a cold start on a window of motion energy e, kept (its
// estimate accepted) or refused.
func (b *coldBackoff) tried(e float64, kept bool) {
	if kept {
		b.reset()
		return
	}
	b.held = 0
	if b.refused == 0 {
		b.lo, b.hi = e, e
	}
	b.refused++
	b.lo, b.hi = min(b.lo, e), max(b.hi, e)
}

// reset is a certified window (a kept cold start is one): the next
// refusal starts the count anew, unless its motion energy lies in the
// range of the count it ends (kept if it had held cold starts back).
func (b *coldBackoff) reset() {
	last := b.last
	if b.refused >= 2 {
		last.refused, last.lo, last.hi = b.refused, b.lo, b.hi
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
