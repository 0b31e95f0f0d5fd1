package modes

import (
	"cmp"
	"math"
	"slices"

	"github.com/physd/physd/window"
)

// weakRatio is the least height over its floor at which a line that
// window.PeakRatio misses is tried as a mode (window.DecayLinesAbove).
// A decay's line is the Lorentzian of e^{−σt}, about (σ² + Δω²)/σ²
// above its skirt Δω away: against the floor DecayLines measures (the
// bins 3–16 away, about 0.5 Hz over 20 s) some 30–45× for a mode as
// damped as a structure's higher ones (ζ 1.5–2 % at 4–4.5 Hz), so that
// a noise floor any higher than a clean displacement's hides it — a
// beam's 4.1 Hz mode read by flow stood 5× over its floor, a 4.5 Hz one
// under 0.05 px of noise missed 30× on 10 of 10 seeds. A missed mode
// stays in the others' coordinates, which then fail their fit (the
// beam's 0.8, 2.2 and 4.1 Hz modes: all three refused for want of the
// third).
const weakRatio = 5

// weakShare is the least share of the clip's power (bins 3 and up) such
// a line carries (window.PeakShare is 1 %): a decay's power goes as
// A²/σ, so a higher mode at a third of the first's amplitude that decays
// five times as fast holds about 2 %, and at a quarter and eight times
// under 1 % — a cable's 4.1 Hz mode (ζ 1.5 %, 0.2 px beside 0.6 px at
// 0.8 Hz, ζ 1 %) read by flow held 0.9 % and stood 15× over its floor,
// its term needed by the joint fit at F ≈ 1300.
const weakShare = 0.002

// line is a spectral line of one of a window's clips.
type line struct {
	window.Line
	clip int
}

// modeLines are the lines the modes of the clips xs (sampled dt apart)
// are fitted at, at most maxModes of them, the strongest first: every line
// window.DecayLines finds (clipLines), then each weaker one
// (weakRatio) that the joint fit needs (confirmLine) — not within a
// frequency bin of a line taken, nor of a combination tone of them (a
// readout's own harmonics, anyTone), nor within CloseBandwidths of
// them (a skirt of theirs, or a pair CloseReason would refuse both of).
func modeLines(xs [][]float64, dt float64, maxModes int) []window.Line {
	strong := clipLines(xs, dt, window.PeakRatio, window.PeakShare)
	if len(strong) == 0 || len(strong) >= maxModes {
		return plain(strong[:min(len(strong), maxModes)])
	}
	taken := slices.Clone(strong)
	// base holds, per clip, the joint fit at the lines taken so far.
	base := map[int]*Model{}
	for _, c := range clipLines(xs, dt, weakRatio, weakShare) {
		if len(taken) >= maxModes {
			break
		}
		x := xs[c.clip]
		bin := 1 / (float64(len(x)) * dt)
		ws := make([]float64, len(taken))
		near := false
		for i, l := range taken {
			ws[i] = 2 * math.Pi * l.Hz
			near = near || math.Abs(l.Hz-c.Hz) < bin
		}
		if near || anyTone(ws, func(w float64) bool { return math.Abs(w/(2*math.Pi)-c.Hz) < bin }) {
			continue
		}
		without, ok := base[c.clip]
		if !ok {
			m, err := Fit(x, dt, ws, startZeta)
			if err != nil {
				m = nil
			}
			without, base[c.clip] = m, m
		}
		if without != nil && confirmLine(x, dt, without, ws, 2*math.Pi*c.Hz) {
			taken = append(taken, c)
			clear(base)
		}
	}
	return plain(taken)
}

// plain is ls's lines.
func plain(ls []line) []window.Line {
	out := make([]window.Line, len(ls))
	for i, l := range ls {
		out[i] = l.Line
	}
	return out
}

// confirmLine reports whether a term at omega (rad/s) is one the joint
// fit of x with terms at ws (without: that fit) needs: fitted with it,
// it stays within a bin of omega, rings (0 < ζ < pairMaxZeta), stands
// CloseBandwidths half-power bandwidths from every other term, and
// explains more than MaxPairF times the noise (termF).
func confirmLine(x []float64, dt float64, without *Model, ws []float64, omega float64) bool {
	with, err := Fit(x, dt, append(slices.Clone(ws), omega), startZeta)
	if err != nil {
		return false
	}
	k := len(ws)
	tm := with.Terms[k]
	bin := 2 * math.Pi / (float64(len(x)) * dt)
	if math.Abs(tm.Omega-omega) > bin || !(tm.Zeta() > 0) || !(tm.Zeta() < pairMaxZeta) {
		return false
	}
	for _, o := range with.Terms[:k] {
		bw := 2 * math.Max(math.Abs(o.Zeta()*o.Hz()), tm.Zeta()*tm.Hz())
		if math.Abs(o.Hz()-tm.Hz()) < CloseBandwidths*bw {
			return false
		}
	}
	f, _, ok := termF(x, dt, without, with)
	return ok && f > MaxPairF
}

// clipLines are the spectral lines of every clip standing ratio times
// over their floor with share of its power (window.DecayLinesWith), the
// strongest first by their largest share in any clip; lines of two clips
// within the coarser clip's frequency bin (1/T) are one, at the
// frequency of the clip where it is stronger.
func clipLines(xs [][]float64, dt, ratio, share float64) []line {
	var all []line
	var bins []float64
	for c, x := range xs {
		if len(x) == 0 {
			continue
		}
		bin := 1 / (float64(len(x)) * dt)
		for _, l := range window.DecayLinesWith(x, dt, ratio, share) {
			merged := false
			for j, o := range all {
				if math.Abs(o.Hz-l.Hz) < max(bin, bins[j]) {
					if l.Share > o.Share {
						all[j] = line{l, c}
					}
					bins[j] = max(bins[j], bin)
					merged = true
					break
				}
			}
			if !merged {
				all, bins = append(all, line{l, c}), append(bins, bin)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b line) int { return cmp.Compare(b.Share, a.Share) })
	return all
}
