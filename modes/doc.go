// Package modes finds the modes a readout rings in and gives each its
// own (γ1, γ0) and certificate.
//
// A structure released or knocked rings in several modes at once; the
// paper's ODE is one mode's. A readout x(t) of such a response is
//
//	x(t) = c + Σ_i e^{−σ_i t} (a_i cos ω_i t + b_i sin ω_i t),
//
// each term a free response of its own z″ + γ1 z′ + γ0 z = 0 with
// γ1 = 2σ_i, γ0 = σ_i² + ω_i². The modes are found as the readout's
// spectral lines (window.DecayLines, and fainter ones the joint fit
// needs: modeLines), fitted jointly by nonlinear least squares (Fit),
// and each is then read on its own: its modal coordinate
// is the readout less the offset and the other modes' fitted terms, a
// trajectory of its own ODE that the paper's estimator fits and
// window.Certify judges like any window's latent (Separate). Modes
// within CloseBandwidths half-power bandwidths of each other are refused
// with a reason, not merged: one readout cannot tell them apart reliably.
package modes
