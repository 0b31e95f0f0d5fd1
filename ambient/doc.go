// Package ambient identifies a structure's mode from its response to
// broadband excitation — wind, traffic, machinery — the way operational
// modal analysis does, and certifies it the way package window certifies
// a free decay.
//
// For a linear mode z″ + γ1 z′ + γ0 z = f(t) driven by white (or
// broadband) forcing f, the response's correlation function
//
//	R(τ) = E[(z(t+τ) − μ)(z(t) − μ)]
//
// satisfies the homogeneous ODE R″ + γ1 R′ + γ0 R = 0 for τ > 0 (the
// natural excitation technique, NExT): R is a free response, so the
// paper's estimator and certificate apply to it as they do to a window's
// latent. The raw latent of an ambient record is a forced response, whose
// ODE residual is not zero at the truth; nothing here is judged on it.
//
// The record is summed per frame (Correlation.Push, O(lags) a frame), in
// segments, so that minutes of video cost no more memory than the sums;
// the segments give the estimate's σ by a delete-a-group jackknife and
// the signature's own noise per lag, against which the single-mode fit is
// tested (two close modes, a harmonic forcing).
package ambient
