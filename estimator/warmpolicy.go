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
//     held back like the cold starts: 1, 2, 4, then at most maxColdHold
//     fit-only windows between trained ones, until a window is accepted
//     or its motion energy moves by more than coldEnergyRatio from the
//     last refused one's.
//
// Certification is never skipped: every window gets an estimate and a
// verdict, only the training that led to it is spared.
type warmPolicy struct {
	// settled is set while the last window's warm estimate was accepted;
	// since counts the fit-only windows accepted since the last training.
	settled bool
	since   int
	// refused counts the trained windows refused in a row; held the
	// fit-only windows since the last trained one; energy the motion
	// energy of the last refused trained window.
	refused, held int
	energy        float64
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
	if w.refused < 2 || !(e <= coldEnergyRatio*w.energy && e*coldEnergyRatio >= w.energy) {
		return false, false
	}
	if w.held >= min(1<<(w.refused-2), maxColdHold) {
		return false, false
	}
	w.held++
	return true, true
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
	w.settled, w.since, w.held = false, 0, 0
	w.refused++
	w.energy = e
}

// reset forgets the scene: a new encoder starts trained.
func (w *warmPolicy) reset() { *w = warmPolicy{} }
