package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A sub-pixel block released in two modes (1.0 Hz at ζ = 1 %, 0.6 px;
// 2.7 Hz at ζ = 2 %, 0.2 px; 320×240, lossless H.264): physd estimate with no
// flags reports both modes and certifies each within the bar (γ0 within
// 1 %, ζ within 25 %) of its truth. Seeds 1–10 by hand, 3:1 and 1:3:
// 40 of 40 (20 s, lossless; before the readout's nonlinearity was fitted
// with the modes, 37: the 0.2 px mode refused for a poor fit on 3).
func TestEstimateTwoModes(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and estimates two 20 s clips")
	}
	if certified, of := estimateModes(t, "block", "1.0:0.01:0.6,2.7:0.02:0.2", pairTruth, 1, 2); certified < of {
		t.Errorf("certified %d of %d modes, want all", certified, of)
	}
}

// The same pair swinging a few pixels, 3 px : 1 px and 1 px : 3 px: read
// by the tracker (the small-motion reading saturates and is refused), each
// placed to a fraction of a pixel on its own moving pixels, its residual
// distortion fitted with the modes. Seeds 1–10 by hand: 40 of 40 (before
// the readout's nonlinearity was fitted: 3:1 — 10/10 and 5/10; 1:3 —
// 8/10 and 10/10; before the sub-pixel refinement 9/10, 3/10 and mostly
// none).
func TestEstimateTwoModesLargeSwing(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and estimates six 20 s clips")
	}
	var certified, of int
	for _, modes := range []string{"1.0:0.01:3,2.7:0.02:1", "1.0:0.01:1,2.7:0.02:3"} {
		c, n := estimateModes(t, "block", modes, pairTruth, 1, 3)
		certified, of = certified+c, of+n
	}
	if certified < of {
		t.Errorf("certified %d of %d modes, want all", certified, of)
	}
}

// A cable's first three harmonics (1.3, 2.6, 3.9 Hz at ζ = 1 %; 0.3,
// 0.2, 0.1 px — a cable seen from afar), a thin line across 320×240:
// all three certified, their frequency ratios within 0.5 % of 2 and 3
// (seed 1 here; seeds 1–5 by hand: 15 of 15, ratios within 0.01 %). At 1, 0.6 and
// 0.3 px the small-motion reading of a line a few pixels thick is no
// longer linear, its distortion of the first harmonic falls on the
// second, and the second is refused by the fit check.
func TestEstimateCableHarmonics(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and estimates a 20 s clip")
	}
	truth := [][2]float64{{1.3, 0.01}, {2.6, 0.01}, {3.9, 0.01}}
	rep := estimateModesReports(t, "cable", "1.3:0.01:0.3,2.6:0.01:0.2,3.9:0.01:0.1", truth, 1, 1)
	ms := rep[0].Modes.Modes
	for i, m := range ms {
		if !m.Certified {
			t.Errorf("harmonic %d refused: %v", i+1, m.Reasons)
		}
	}
	for k := 1; k < len(ms); k++ {
		if r := ms[k].FreqN / ms[0].FreqN; math.Abs(r/float64(k+1)-1) > 0.005 {
			t.Errorf("harmonic %d / 1: %.5f, want %d within 0.5 %%", k+1, r, k+1)
		}
	}
}

// One free decay of two equal modes 0.75 half-power bandwidths apart
// (1.00 and 1.03 Hz, ζ = 2 %, 1 px each, 320×240, lossless): below one
// bandwidth a decay's envelope cannot tell their beat from friction
// (modes.DecayResolution), and physd reads them as one mode at their mean
// frequency — certified on 6 seeds of 6 by hand, γ0 3 % from each mode,
// while pairs 1 and 1.5 bandwidths apart were refused on 12 of 12. What
// the certificate says must then cover the pair: one mode, or modes
// closer than resolves_hz, here more than their 0.03 Hz.
func TestEstimateSaysWhatOneDecayResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and estimates a 20 s clip")
	}
	rep, clip, _ := simEstimate(t, "block", "1.00:0.02:1,1.03:0.02:1", 1)
	t.Logf("%.4f ± %.4f Hz, ζ %.4f: %s, resolves %.3g Hz %v", rep.FreqN, rep.SigmaF, rep.Zeta, rep.Verdict, rep.ResolvesHz, rep.Reasons)
	if !rep.Certified {
		if rep.ResolvesHz != 0 {
			t.Errorf("refused with resolves_hz %g, want it absent", rep.ResolvesHz)
		}
		return
	}
	if rep.ResolvesHz <= 0.03 {
		t.Errorf("certified one mode at %.4f Hz saying modes %g Hz apart would be told apart, yet it is a pair 0.03 Hz apart", rep.FreqN, rep.ResolvesHz)
	}
	code, text, _ := physd(t, "estimate", clip)
	if code != exitOK || !strings.Contains(text, fmt.Sprintf("modes closer than about %.2g Hz", rep.ResolvesHz)) {
		t.Errorf("exit %d; the summary does not say what the certificate resolves:\n%s", code, text)
	}
}

// pairTruth is the pair: 1.0 Hz at ζ = 1 % and 2.7 Hz at 2 %.
var pairTruth = [][2]float64{{1.0, 0.01}, {2.7, 0.02}}

// estimateModes renders the object released in the modes spec (physd
// sim's --modes, whose (f_n, ζ) truth lists by frequency) for seeds
// first…last, estimates each clip, fails the test on a mode certified
// outside the bar (γ0 within 1 %, ζ within 25 %) and returns how many
// modes were certified, of how many.
func estimateModes(t *testing.T, object, spec string, truth [][2]float64, first, last int) (certified, of int) {
	t.Helper()
	for _, rep := range estimateModesReports(t, object, spec, truth, first, last) {
		for _, m := range rep.Modes.Modes {
			if m.Certified {
				certified++
			}
			of++
		}
	}
	return certified, of
}

// estimateModesReports is estimateModes' runs: each seed's report, every
// one holding as many modes as truth.
func estimateModesReports(t *testing.T, object, spec string, truth [][2]float64, first, last int) []estimateReport {
	t.Helper()
	var reps []estimateReport
	for seed := first; seed <= last; seed++ {
		rep, _, code := simEstimate(t, object, spec, seed)
		if rep.Modes == nil || len(rep.Modes.Modes) != len(truth) {
			t.Fatalf("%s seed %d: modes %+v, want %d", spec, seed, rep.Modes, len(truth))
		}
		for i, m := range rep.Modes.Modes {
			fn, zeta := truth[i][0], truth[i][1]
			inBar := math.Abs(m.FreqN*m.FreqN/(fn*fn)-1) <= 0.01 && math.Abs(m.Zeta/zeta-1) <= 0.25
			t.Logf("%s seed %d mode %d (%s): %.4f ± %.4f Hz, ζ %.4f ± %.4f, %.3g px: %s %v", spec, seed, m.Index, rep.Modes.Readout, m.FreqN, m.SigmaF, m.Zeta, m.SigmaZ, m.AmplitudePx, m.Verdict, m.Reasons)
			if m.Certified && !inBar {
				t.Errorf("%s seed %d mode %d: certified outside the bar", spec, seed, m.Index)
			}
			if m.Certified != (m.Verdict == "certified") {
				t.Errorf("%s seed %d mode %d: certified %v, verdict %s", spec, seed, m.Index, m.Certified, m.Verdict)
			}
			if want := 2 * m.Zeta * m.FreqN; m.Certified != (m.ResolvesHz > 0) || (m.Certified && math.Abs(m.ResolvesHz/want-1) > 1e-9) {
				t.Errorf("%s seed %d mode %d: certified %v with resolves_hz %g, want the half-power bandwidth %g on a certified mode only", spec, seed, m.Index, m.Certified, m.ResolvesHz, want)
			}
		}
		if (code == exitOK) != rep.Certified {
			t.Errorf("%s seed %d: exit %d with the window certified %v: the exit status is the window's", spec, seed, code, rep.Certified)
		}
		reps = append(reps, rep)
	}
	return reps
}

// simEstimate renders the object released in the modes spec (physd sim's
// --modes; 320×240, 20 s, lossless) for seed and estimates it with physd
// estimate --json: its report, the clip and the exit status.
func simEstimate(t *testing.T, object, spec string, seed int) (estimateReport, string, int) {
	t.Helper()
	clip := filepath.Join(t.TempDir(), "modes.mp4")
	if code, _, e := physd(t, "sim", "--system", "structure", "--object", object, "--modes", spec, "--duration", "20",
		"--width", "320", "--height", "240", "--seed", fmt.Sprint(seed), clip); code != exitOK {
		t.Fatalf("sim: exit %d: %s", code, e)
	}
	code, out, e := physd(t, "estimate", "--json", clip)
	if code != exitOK && code != exitNotCertified {
		t.Fatalf("estimate: exit %d: %s", code, e)
	}
	var rep estimateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep, clip, code
}
