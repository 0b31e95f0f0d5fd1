// Package tracker follows a compact object through a window's frames by
// template matching and reads its displacement along its main axis of
// motion, a candidate latent for the estimator beside its learned
// encoder's.
//
// Why a second readout: the encoder's latent is a linear function of the
// pixels (through smooth features), and a small object that crosses many
// pixels — a bead moving 40 % of its region's height — moves the pixels
// nonlinearly; no linear readout of them is linear in its position over
// the whole swing, and the bend reads as damping that changes with
// amplitude (ballOil: γ1 0.86 where the bead's track says 1.09). A
// template's position is linear in the object's position by construction:
// classical marker tracking, with the marker cut automatically where a
// frame differs from the window's median background (the compact part of
// the blob: a bob without its rod). The latent is the coordinate along
// the curve the object moved on, a line or an arc, so a pendulum's bob is
// read by its angle; an object hidden for a while is read over the run
// of frames it was seen in.
//
// Which readout is reported is not this package's choice: window.Choose
// certifies every candidate and picks among them by their fit.
package tracker
