package estimator

// warmPolicy decides, for a learner with LearnerOptions.Lazy, when a
// window's warm training can wait and the warm encoder's estimate is
// fitted as it stands (fit only: the features come from the per-frame
// cache, so a fit costs a fraction of training plus a fit).
//
//   - Settled: the last window's warm estimate was accepted. Training
//     on every hop then mostly re-learns what the encoder knows (the
//     windows overlap by all but a hop), so the next windows are fitted
//     as they stand and trained only every trainEvery-th window, or as
//     soon as a fit-only estimate is refused (that window is then
//     trained and fitted as before, so it keeps its chance).
//   - Refused: warm training on a refused window is rolled back, so on a
//     scene that keeps refusing it (two trained windows in a row) it is
//     held back like the cold starts (backoff): 1, 2, 4, then at most
//     maxHold fit-only windows between trained ones, until a window is
//     accepted or its motion energy moves by more than energyRatio from
//     the last refused one's.
//
// Certification is never skipped: every window gets an estimate and a
// verdict, only the training that led to it is spared.
type warmPolicy struct {
	// settled is set while the last window's warm estimate was accepted;
	// since counts the fit-only windows accepted since the last training.
	settled bool
	since   int
	// backoff counts the trained windows refused in a row and the
	// fit-only windows held since the last trained one, against the last
	// refused trained window's motion energy (lastRefused).
	backoff
}

// trainEvery is how often a settled encoder still trains: every
// trainEvery-th window, so that it follows slow changes of the scene.
const trainEvery = 4

// fitOnly tells whether a window of motion energy e is first fitted
// without training; held is set when, refused too, it is not trained
// either (the refused scene's back-off), and the window is counted as
// such.
func (w *warmPolicy) fitOnly(e float64) (try, held bool) {
	if w.settled {
		return w.since < trainEvery-1, false
	}
	h := w.hold(e)
	return h, h
}

// accepted records a window whose warm estimate was accepted, trained on
// it or not.
func (w *warmPolicy) accepted(trained bool) {
	if trained || !w.settled {
		*w = warmPolicy{settled: true}
		return
	}
	w.since++
}

// refusedTrained records a trained window of motion energy e whose
// estimate was refused.
func (w *warmPolicy) refusedTrained(e float64) {
	w.settled, w.since = false, 0
	w.refuse(e, lastRefused)
}

// reset forgets the scene: a new encoder starts trained.
func (w *warmPolicy) reset() { *w = warmPolicy{} }
