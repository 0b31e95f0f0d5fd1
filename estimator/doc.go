// Package estimator learns, from the frames of one or more clips, a per-frame
// encoder E(x) → z and the coefficients (γ1, γ0) of
//
//	z'' + γ1 z' + γ0 z = 0
//
// as in "Physics from Video" (Secs. 3 and 5): centred finite differences give
// z' and z”, the ODE residual plus a variance floor is minimised over encoder
// and coefficients together, with no decoder.
//
// It knows learning only: it never opens a camera or a socket. Each idea of
// the paper has one named place here:
//
//   - the stencil: Stencil (stencil.go);
//   - the residual and the losses: Residual, Objective (loss.go);
//   - the variance floor and its alternatives: Regularizer (loss.go);
//   - the least-squares ODE fit and its uncertainty: FitODE (odefit.go);
//   - the exact discrete-time AR(2) map: Exact (discrete.go);
//   - the encoders: LowRank (lowrank.go) and the paper's CNN (cnn.go);
//   - training: Fit (fit.go), with Presets (preset.go).
//
// All fitting is float64.
package estimator
