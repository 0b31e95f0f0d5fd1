package window

import (
	"math"
	"math/cmplx"
)

// AutoSamplesPerPeriod is the fewest bins a period of the certified mode
// keeps under AutoBin: twice the eight per period the estimator resolves
// (estimator.MaxOmega), so the mode may double before it leaves the band,
// and the Binner's triangle passes it at more than 0.98 of its amplitude.
const AutoSamplesPerPeriod = 16

// AutoMinFrames is the fewest bins a window keeps under AutoBin: the
// default pendulum's 4.7 s window at bin 2, the shortest the daemon's
// tests certify it from (daemon.TestBinnedCamera).
const AutoMinFrames = 48

// AutoBin is the decimation a sliding-window line chooses (windows.bin:
// auto) from a window it certified with (γ1, γ0): the window held frames
// frames dt seconds apart, each standing for cur camera frames. It is the
// largest N ≤ maxN (and at least 1) with
//
//	N·Δt_cam·|λ|max ≤ 2π / AutoSamplesPerPeriod,  Δt_cam = dt / cur,
//	round(T / (N·Δt_cam)) + 1 ≥ AutoMinFrames,  T = (frames−1)·dt,
//
// where |λ|max is the largest magnitude of the roots of
// λ² + γ1 λ + γ0 (√γ0 for an underdamped mode, its natural frequency;
// the faster decay rate for an overdamped one), and the second line
// counts the bins a window of the same span holds, as the Slicer counts
// them. A γ that is not finite, or γ0 ≤ 0, gives 1.
func AutoBin(gamma1, gamma0, dt float64, frames, cur, maxN int) int {
	if !(gamma0 > 0) || math.IsInf(gamma0, 0) || math.IsNaN(gamma1) || math.IsInf(gamma1, 0) {
		return 1
	}
	d := cmplx.Sqrt(complex(gamma1*gamma1/4-gamma0, 0))
	fast := max(cmplx.Abs(complex(-gamma1/2, 0)+d), cmplx.Abs(complex(-gamma1/2, 0)-d))
	return autoBin(fast, dt, frames, cur, maxN)
}

// BlindBin is the most AutoBinBand decimates a line that has certified
// nothing and whose readouts hold no spectral line. Whatever the full
// rate resolves (estimator.MaxOmega: eight frames a period, f ≤ fps/8)
// stays below the binned rate's Nyquist frequency fps/(2N) for N < 4,
// so a mode that rises later shows as a line in the binned windows
// (TopPeak), and the line asks for a finer decimation at once.
const BlindBin = 3

// LineSamplesPerPeriod is the fewest bins a period of a spectral line
// keeps under AutoBinBand: the eight the estimator resolves
// (estimator.MaxOmega). A line is not a certified mode: it needs to stay
// where a fit can still find it, not the margin AutoBin keeps for a mode
// being followed. The Binner's triangle passes it at 0.95 or more.
const LineSamplesPerPeriod = 8

// AutoBinBand is the decimation the spectral lines of a window's
// readouts allow (TopPeak's fHz, the highest): the largest N ≤ maxN
// keeping LineSamplesPerPeriod bins a period of the line and
// AutoMinFrames bins a window. With no line (fHz = 0) it is at most
// BlindBin, or at most maxN when blind is false (a line whose certified
// mode bounds it already).
func AutoBinBand(fHz, dt float64, frames, cur, maxN int, blind bool) int {
	if math.IsNaN(fHz) || math.IsInf(fHz, 0) || fHz < 0 {
		return 1
	}
	if fHz == 0 {
		if blind {
			maxN = min(maxN, BlindBin)
		}
		return autoBin(0, dt, frames, cur, maxN)
	}
	return autoBin(2*math.Pi*fHz*LineSamplesPerPeriod/AutoSamplesPerPeriod, dt, frames, cur, maxN)
}

// autoBin is the largest N ≤ maxN keeping AutoSamplesPerPeriod bins a
// period of a motion at rate rad/s (none: rate 0) and AutoMinFrames bins
// a window.
func autoBin(rate, dt float64, frames, cur, maxN int) int {
	if !(dt > 0) || cur < 1 || frames < 1 {
		return 1
	}
	camDt := dt / float64(cur)
	span := float64(frames-1) * dt
	n := maxN
	if rate > 0 {
		n = min(int(2*math.Pi/AutoSamplesPerPeriod/(camDt*rate)), maxN)
	}
	for n > 1 && int(span/(float64(n)*camDt)+0.5)+1 < AutoMinFrames {
		n--
	}
	return max(n, 1)
}
