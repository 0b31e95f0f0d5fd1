package estimator

// backoff holds back a costly try on a scene that keeps refusing it.
// After two refused tries in a row on windows of like motion, the next
// ones are held back for 1, 2, 4, 8, … then at most maxHold windows
// between tries; a window whose motion energy lies more than energyRatio outside
// the refused ones' tries again at once, and an accepted window ends the
// count (reset). The learner holds its cold starts (coldBackoff) and,
// lazy, its warm training (warmPolicy) this way; they differ in which
// refused windows' energies a window is compared with (energySpan).
type backoff struct {
	// refused counts the tries refused in a row; held the windows held
	// back since the last try; [lo, hi] the motion energies of the
	// windows those tries ran on (as energySpan says).
	refused, held int
	lo, hi        float64
}

const (
	// maxHold is the most windows held back between tries: about a
	// minute at the daemon's 1 s hop, as the sources' reconnect back-off
	// caps. Only a scene whose motion stays alike and refuses every try
	// reaches it — a new motion (energyRatio) or an accepted window tries
	// at once — and there a cold start every 9th window (the cap was 8
	// until 2026-12-02) bought nothing: on make bench's real scenes the
	// cap of 64 took the cold starts from 0.10 to 0.05 a window (0.12 to
	// 0.05 uncertifiable) and the certified windows stayed 27 of 60
	// (docs/benchmarks.md).
	maxHold = 64
	// energyRatio is the change of motion energy, either way, that
	// counts as a new scene.
	energyRatio = 2.0
)

// energySpan is which refused windows' motion energies a backoff
// compares a window with.
type energySpan int

const (
	// everyRefused spans every refused try's energy since the count
	// began.
	everyRefused energySpan = iota
	// lastRefused is the last refused try's energy alone.
	lastRefused
)

// like tells whether motion energy e lies within energyRatio of
// [lo, hi]: the scene the refused tries ran on.
func (b *backoff) like(e float64) bool {
	return e <= energyRatio*b.hi && e*energyRatio >= b.lo
}

// hold tells whether the try on a window of motion energy e is held
// back, and counts it if so.
func (b *backoff) hold(e float64) bool {
	if b.refused < 2 || !b.like(e) {
		return false
	}
	if b.held >= min(1<<(b.refused-2), maxHold) {
		return false
	}
	b.held++
	return true
}

// refuse records a try refused on a window of motion energy e; span
// says what [lo, hi] is to span.
func (b *backoff) refuse(e float64, span energySpan) {
	b.held = 0
	if b.refused == 0 || span == lastRefused {
		b.lo, b.hi = e, e
	}
	b.refused++
	b.lo, b.hi = min(b.lo, e), max(b.hi, e)
}

// reset ends the count: a window was accepted.
func (b *backoff) reset() { *b = backoff{} }
