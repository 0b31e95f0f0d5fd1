package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// accurate applies the accuracy bar: |γ0 − γ0*| ≤ 0.5 % of γ0*, and
// |γ1 − γ1*| ≤ 2 % of γ1* when γ1* ≥ 1, else ≤ 0.004.
func accurate(g0, g1, t0, t1 float64) bool {
	tol1 := 0.004
	if t1 >= 1 {
		tol1 = 0.02 * t1
	}
	return math.Abs(g0-t0) <= 0.005*t0 && math.Abs(g1-t1) <= tol1
}

func meanStd(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	if len(x) > 1 {
		s /= float64(len(x) - 1)
	}
	return m, math.Sqrt(s)
}

func within(x []float64, k float64) float64 {
	n := 0
	for _, v := range x {
		if v <= k {
			n++
		}
	}
	return float64(n) / float64(len(x))
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtPaper(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.4f", v)
}

// report writes the Markdown tables and a summary of the must-show checks.
func report(w io.Writer, cs []cell, res [][]outcome, first, seeds, stressSeeds int, took time.Duration) {
	type tally struct{ cells, ok int }
	var identAcc, identCert, unidNot, undOwn tally
	// identPrecise counts the identifiable cells that pass the paper's
	// conditions and the precision condition on every seed.
	var identPrecise int
	// Fits that pass the paper's conditions but not the precision
	// condition, each with its σ.
	var imprecise []string
	for i, c := range cs {
		for k, o := range res[i] {
			if o.err == nil && o.identified && !o.precision.Holds {
				pr := o.precision
				imprecise = append(imprecise, fmt.Sprintf("%s / %s, seed %d: σ(f_n) %.3g %% of f_n (limit %.3g %%), σ(ζ) %.3g (limit %.3g)",
					c.table, c.label, first+k, 100*pr.RelSigmaFn, 100*pr.LimitFn, pr.SigmaZeta, pr.LimitZeta))
			}
		}
	}
	// Calibration of the reported σ on the judged identifiable cells:
	// |estimate − truth| / σ per fit, for γ0 and γ1.
	var z0s, z1s []float64
	calib := func(os []outcome, t0, t1 float64) {
		for _, o := range os {
			if o.err == nil && o.s0 > 0 && o.s1 > 0 {
				z0s = append(z0s, math.Abs(o.g0-t0)/o.s0)
				z1s = append(z1s, math.Abs(o.g1-t1)/o.s1)
			}
		}
	}
	// Certified fits labelled undamped: the label comes from ζ and its σ,
	// so a certificate (which resolved the damping) that σ cannot tell
	// from zero is counted and shown.
	var certUndamped, certified, identUndamped, identified int
	var undampedCells []string
	for i, c := range cs {
		n := 0
		for _, o := range res[i] {
			if o.err != nil || !o.identified {
				continue
			}
			identified++
			if o.regime == estimator.Undamped {
				identUndamped++
			}
			if o.verdict == window.Certified {
				certified++
				if o.regime == estimator.Undamped {
					certUndamped++
					n++
				}
			}
		}
		if n > 0 {
			undampedCells = append(undampedCells, fmt.Sprintf("%s (%d)", c.name(), n))
		}
	}
	// The stress test's false certificates: certified fits more than 2 %
	// off in γ0 or 0.02 off in γ1.
	var stressCert, stressFalse, stressIdent, stressIdentFalse int
	var stressFalseCells []string
	// Per stress cell: fits certified within the accuracy bar, identified
	// within it, and false certificates.
	type stressTally struct{ certInBar, identInBar, false int }
	stressOf := map[int]stressTally{}
	for i, c := range cs {
		if c.nuis.Kind == "" {
			continue
		}
		t1, t0 := sim.GroundTruth(c.regime)
		var st stressTally
		for _, o := range res[i] {
			if o.err != nil || !o.identified {
				continue
			}
			off := math.Abs(o.g0-t0) > 0.02*t0 || math.Abs(o.g1-t1) > 0.02
			stressIdent++
			if off {
				stressIdentFalse++
			}
			in := accurate(o.g0, o.g1, t0, t1)
			if in {
				st.identInBar++
			}
			if o.verdict == window.Certified {
				stressCert++
				if in {
					st.certInBar++
				}
				if off {
					stressFalse++
					st.false++
				}
			}
		}
		stressOf[i] = st
		if st.false > 0 {
			stressFalseCells = append(stressFalseCells, fmt.Sprintf("%s (%d)", c.label, st.false))
		}
	}
	// The stress cells the paper's own CNN gets within the accuracy bar
	// (judged on the paper's figures, not ours) must be certified within
	// the bar on at least stressShare of the seeds (8 of 10).
	const stressShare = 0.8
	need := func(n int) int { return int(math.Ceil(stressShare*float64(n) - 1e-9)) }
	var inBar, inBarOK, inBarPrecise int
	var inBarMissed []string
	inBarCell := map[int]bool{}
	for i, c := range cs {
		if c.nuis.Kind == "" {
			continue
		}
		t1, t0 := sim.GroundTruth(c.regime)
		if math.IsNaN(c.p0) || !accurate(c.p0, c.p1, t0, t1) {
			continue
		}
		inBarCell[i] = true
		inBar++
		st, n := stressOf[i], len(res[i])
		if st.identInBar >= need(n) {
			inBarOK++
		}
		if st.certInBar >= need(n) {
			inBarPrecise++
		} else {
			inBarMissed = append(inBarMissed, fmt.Sprintf("%s (%d/%d)", c.label, st.certInBar, n))
		}
	}
	var failures []string
	var body []string
	table := ""
	for i, c := range cs {
		if c.table != table {
			table = c.table
			body = append(body, fmt.Sprintf("\n## %s\n\n| setting | paper γ0 | paper γ1 | truth (γ0, γ1) | ours γ0 | ours γ1 | mean σ (γ0, γ1) | verdicts | paper: identifiable | check |\n|---|---|---|---|---|---|---|---|---|---|", table))
		}
		t1, t0 := sim.GroundTruth(c.regime)
		n := len(res[i])
		var g0s, g1s, s0s, s1s []float64
		counts := map[window.Status]int{}
		idents, vague := 0, 0
		var errs []string
		allAcc := true
		for _, o := range res[i] {
			if o.err != nil {
				errs = append(errs, o.err.Error())
				counts["error"]++
				allAcc = false
				continue
			}
			g0s, g1s, s0s, s1s = append(g0s, o.g0), append(g1s, o.g1), append(s0s, o.s0), append(s1s, o.s1)
			counts[o.verdict]++
			if o.identified {
				idents++
				if !o.precision.Holds {
					vague++
				}
			}
			allAcc = allAcc && accurate(o.g0, o.g1, t0, t1)
		}
		ours0, ours1, sig := "—", "—", "—"
		if len(g0s) > 0 {
			m0, sd0 := meanStd(g0s)
			m1, sd1 := meanStd(g1s)
			ms0, _ := meanStd(s0s)
			ms1, _ := meanStd(s1s)
			ours0, ours1 = fmt.Sprintf("%.4f ± %.4f", m0, sd0), fmt.Sprintf("%.4f ± %.4f", m1, sd1)
			sig = fmt.Sprintf("%.4f, %.4f", ms0, ms1)
		}
		vs := ""
		for _, st := range []window.Status{window.Certified, window.UndampedDiscrete, window.NotCertified, "error"} {
			if counts[st] > 0 {
				vs += fmt.Sprintf("%s %d/%d ", st, counts[st], n)
			}
		}
		if vague > 0 {
			vs += fmt.Sprintf("(identified but imprecise %d/%d) ", vague, n)
		}
		check := ""
		certAll := counts[window.Certified] == n
		switch {
		// The stress test, and the ablation's other regularisers, which the
		// paper reports as failures, are shown but not judged.
		case c.nuis.Kind != "":
			st := stressOf[i]
			check = fmt.Sprintf("certified in the bar %d/%d, false %d", st.certInBar, n, st.false)
			if inBarCell[i] {
				check += " (paper in the bar)"
			}
		case c.loss != "" && !c.ident:
			check = "report only"
		case c.ident && c.undamped:
			calib(res[i], t0, t1)
			identAcc.cells++
			undOwn.cells++
			if allAcc {
				identAcc.ok++
				check = "accurate"
			} else {
				check = "**inaccurate**"
				failures = append(failures, c.name()+": accuracy")
			}
			if counts[window.UndampedDiscrete] == n {
				undOwn.ok++
				check += ", own verdict"
			} else {
				check += ", **not on the undamped verdict**"
				failures = append(failures, c.name()+": undamped verdict")
			}
		case c.ident:
			calib(res[i], t0, t1)
			identAcc.cells++
			identCert.cells++
			check = ""
			if allAcc {
				identAcc.ok++
				check += "accurate"
			} else {
				check += "**inaccurate**"
				failures = append(failures, c.name()+": accuracy")
			}
			switch {
			case certAll:
				identCert.ok++
				identPrecise++
				check += ", certified"
			case idents == n:
				identCert.ok++
				check += fmt.Sprintf(", identified; precise on %d/%d", counts[window.Certified], n)
			default:
				check += ", **not all identified**"
				failures = append(failures, c.name()+": the paper's conditions")
			}
		default:
			unidNot.cells++
			if counts[window.Certified] == 0 && idents == 0 {
				unidNot.ok++
				check = "not certified"
			} else {
				check = "**certified**"
				failures = append(failures, c.name()+": certified though unidentifiable")
			}
		}
		if len(errs) > 0 {
			check += " (" + errs[0] + ")"
		}
		body = append(body, fmt.Sprintf("| %s | %s | %s | (%g, %g) | %s | %s | %s | %s | %v | %s |",
			c.label, fmtPaper(c.p0), fmtPaper(c.p1), t0, t1, ours0, ours1, sig, vs, c.ident, check))
	}
	fmt.Fprintf(w, "# Paper reproduction\n\nGenerated by `make paper` (`go run ./cmd/paper`) on %s/%s with %d seeds per cell (%d … %d; the stress test's %d, %d … %d) in %s. ", runtime.GOOS, runtime.GOARCH, seeds, first, first+seeds-1, stressSeeds, first, first+stressSeeds-1, took.Round(time.Second))
	fmt.Fprintf(w, "Every clip is rendered by `sim`, written as H.264 (lossless luma) by ffmpeg, read back through `stream.ReadFile` (libavformat/libavcodec), checked for the camera's own motion and stabilised when it moved (package `motion`, as `physd estimate --reference auto` does), fitted with the default `edge` preset, weighed against the objects the tracker follows through the same frames (`tracker.Weigh`: each readout certified by `window.Certify`, `window.Choose` picks) as `physd estimate` does — except the loss and τ ablations, which measure the encoder's training and report its readout alone. The intensity and scale three-clip sets are rendered clip by clip, each clip's z normalised over itself as the authors' generators do, and fitted with one offset per clip (`--offsets per-clip`, the authors' loss with intercept), which the certificate holds to the per-clip coverage test; the other sets share one observation map and one offset.\n\n")
	fmt.Fprintf(w, "Accuracy bar: |γ0 − γ0*| ≤ 0.5 %% of γ0*, |γ1 − γ1*| ≤ 2 %% of γ1* when γ1* ≥ 1, else ≤ 0.004, for every seed. \"paper: identifiable\" is the paper's label.\n\n")
	fmt.Fprintf(w, "## Summary\n\n")
	fmt.Fprintf(w, "- identifiable cells within the accuracy bar on every seed: %d/%d\n", identAcc.ok, identAcc.cells)
	fmt.Fprintf(w, "- identifiable (non-undamped) cells passing the paper's conditions (coverage, conditioning, fit: `identified`) on every seed: %d/%d; of them also precise (certified) on every seed: %d/%d\n", identCert.ok, identCert.cells, identPrecise, identCert.ok)
	fmt.Fprintf(w, "- unidentifiable cells never passing the paper's conditions (so never certified): %d/%d\n", unidNot.ok, unidNot.cells)
	fmt.Fprintf(w, "- undamped single clips on their own verdict (`%s`) on every seed: %d/%d\n", window.UndampedDiscrete, undOwn.ok, undOwn.cells)
	if len(z0s) > 0 {
		fmt.Fprintf(w, "- calibration of the reported σ over the %d fits of those cells: |γ0 − γ0*| ≤ 2σ0 in %.0f %%, |γ1 − γ1*| ≤ 2σ1 in %.0f %% (a calibrated Gaussian σ gives 95 %%); median |error|/σ %.2f (γ0) and %.2f (γ1), 0.67 if calibrated\n",
			len(z0s), 100*within(z0s, 2), 100*within(z1s, 2), median(z0s), median(z1s))
	}
	fmt.Fprintf(w, "- state-consistency stress test: %d false certificates (certified more than 2 %% off in γ0 or 0.02 in γ1) in %d certified fits; on the paper's conditions alone %d more than 2 %% off in %d identified fits", stressFalse, stressCert, stressIdentFalse, stressIdent)
	if len(stressFalseCells) > 0 {
		fmt.Fprintf(w, ", in: %s", strings.Join(stressFalseCells, "; "))
	}
	fmt.Fprintf(w, "; the paper's in-bar cells (its CNN within the accuracy bar) identified within the bar on at least %.0f %% of their seeds: %d/%d\n", 100*stressShare, inBarOK, inBar)
	fmt.Fprintf(w, "- the paper's %s in-bar cells certified in the bar on ≥ %d/%d: %d/%d", count(inBar), need(stressSeeds), stressSeeds, inBarPrecise, inBar)
	if len(inBarMissed) > 0 {
		fmt.Fprintf(w, ", missed: %s", strings.Join(inBarMissed, "; "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- certified fits labelled `undamped` (ζ within 2σ of 0): %d of %d certified fits (%d of %d identified fits)", certUndamped, certified, identUndamped, identified)
	if len(undampedCells) > 0 {
		fmt.Fprintf(w, ", in: %s", strings.Join(undampedCells, "; "))
	}
	fmt.Fprintln(w)
	th := window.Thresholds{}.Resolved()
	fmt.Fprintf(w, "- the precision condition (σ(f_n) ≤ %g %% of f_n, σ(ζ) ≤ max(%g %% of ζ, %g)): %d of %d identified fits pass it; refused for precision (every table, the report-only cells included): ",
		100*th.MaxRelSigmaFn, 100*th.MaxRelSigmaZeta, th.SigmaZetaFloor, identified-len(imprecise), identified)
	if len(imprecise) == 0 {
		fmt.Fprintln(w, "none")
	} else {
		fmt.Fprintln(w)
		for _, s := range imprecise {
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\nCells that miss a check:\n\n")
		for _, f := range failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
	for _, b := range body {
		fmt.Fprintln(w, b)
	}
}

// count spells a small count as a word.
func count(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}
