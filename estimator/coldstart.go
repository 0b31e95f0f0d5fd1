package estimator

// coldBackoff decides when a learner whose warm encoder was refused tries
// a cold start. A cold start costs several times a warm window (the
// closed form and its training steps on top of the warm attempt), and on
// a scene that is not certifiable — no motion, one swing, a stuck cart —
// it is refused every time. After two refused cold starts in a row on
// windows of like motion, the next ones are held back for 1, 2, 4, then
// at most maxColdHold windows between tries; a certified window, or a
// window whose motion energy differs by more than coldEnergyRatio from the
// last refused one's, tries again at once.
type coldBackoff struct {
	// refused counts the cold starts refused in a row; held the windows
	// held back since the last try; energy the motion energy of the
	// window the last refused cold start ran on.
	refused, held int
	energy        float64
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
	if b.refused < 2 || !(e <= coldEnergyRatio*b.energy && e*coldEnergyRatio >= b.energy) {
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
	b.held = 0
	if kept {
		b.refused = 0
		return
	}
	b.refused++
	b.energy = e
}

// reset is a certified window: the next refusal starts the count anew.
func (b *coldBackoff) reset() { *b = coldBackoff{} }

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
