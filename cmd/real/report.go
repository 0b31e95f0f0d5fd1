package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/physd/physd/internal/realvid"
)

// report is everything the Markdown report shows.
type report struct {
	Cases   []realvid.Case
	Runs    []*runResult // two per case: listed flags, then no ROI
	Took    time.Duration
	Command string
	Version string // git describe; "" if unknown
	Date    time.Time
	Jobs    int
	Out     string // the report's path, for the figures' relative links
	ViaMake bool   // run by make (make real)
}

// modeSummary counts one mode's runs.
type modeSummary struct {
	runs, errors, asExpected, falseCerts int
	certWithin, expectCert               int // certified within tolerance, of the cases expected certified
	g0Within2pc                          int // γ0 within 2 % of the truth, of the cases expected certified
	sigma0, sigma0N                      int // |γ0−γ0*| ≤ 2σ0, of the runs with a γ0 truth
	sigma1, sigma1N                      int // |γ1−γ1*| ≤ 2σ1, of the runs with a γ1 truth
	certUndamped                         int // certified with the regime label undamped
	// The paper's conditions without the precision one: the runs
	// identified, those of them also precise, those within tolerance of
	// the cases expected certified, and the false certificates the
	// precision condition removed or not (identified, and outside
	// tolerance or on a not-certified case).
	identified, precise, identWithin, falseIdent int
}

// summary is the report's headline figures.
type summary struct {
	cases          int
	listed, noROI  modeSummary
	listedExpected []string // cases not as expected with the listed flags
	imprecise      []string // runs identified but refused for precision, with their σ
}

func (rep *report) summarise() summary {
	s := summary{cases: len(rep.Cases)}
	for _, r := range rep.Runs {
		m := &s.listed
		if r.Mode == modeNoROI {
			m = &s.noROI
		}
		m.runs++
		if r.Case.Expect == realvid.ExpectCertified {
			m.expectCert++
		}
		if r.Err != "" {
			m.errors++
			if r.Mode == modeListed {
				s.listedExpected = append(s.listedExpected, r.Case.Name+" (error)")
			}
			continue
		}
		j := r.judgement()
		if j.AsExpected {
			m.asExpected++
		} else if r.Mode == modeListed {
			why := "not as expected"
			if j.FalseCertificate {
				why = "false certificate"
			}
			s.listedExpected = append(s.listedExpected, fmt.Sprintf("%s (%s, %s)", r.Case.Name, r.Est.Verdict, why))
		}
		if j.FalseCertificate {
			m.falseCerts++
		}
		o := r.outcome()
		if o.Identified {
			m.identified++
			if o.PrecisionHolds {
				m.precise++
			}
			if r.Case.Expect == realvid.ExpectCertified && j.WithinTolerance {
				m.identWithin++
			}
		}
		if j.FalseIdentified {
			m.falseIdent++
		}
		if o.Imprecise() {
			s.imprecise = append(s.imprecise, fmt.Sprintf("%s (%s): %s", r.Case.Name, r.Mode, r.Est.impreciseText()))
		}
		if r.Est.Certified && r.Est.Regime == "undamped" {
			m.certUndamped++
		}
		if r.Case.Expect == realvid.ExpectCertified {
			if r.Est.Certified && j.WithinTolerance {
				m.certWithin++
			}
			if r.Case.Gamma0RelErr(r.Est.Gamma0) <= 0.02 {
				m.g0Within2pc++
			}
		}
		in0, in1, has0, has1 := r.Case.WithinSigma(o, 2)
		if has0 {
			m.sigma0N++
			if in0 {
				m.sigma0++
			}
		}
		if has1 {
			m.sigma1N++
			if in1 {
				m.sigma1++
			}
		}
	}
	return s
}

func frac(k, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d/%d", k, n)
	}
	return fmt.Sprintf("%d/%d (%.0f %%)", k, n, 100*float64(k)/float64(n))
}

func (m modeSummary) calibration() string {
	return fmt.Sprintf("|γ0−γ0*| ≤ 2σ0 in %s, |γ1−γ1*| ≤ 2σ1 in %s", frac(m.sigma0, m.sigma0N), frac(m.sigma1, m.sigma1N))
}

// lines are the summary, one figure a line.
func (s summary) lines() []string {
	l := []string{
		fmt.Sprintf("cases as expected (listed flags): %d/%d", s.listed.asExpected, s.cases),
		fmt.Sprintf("certified within tolerance: %d/%d of the cases expected certified (listed flags; no ROI: %d/%d)",
			s.listed.certWithin, s.listed.expectCert, s.noROI.certWithin, s.noROI.expectCert),
		fmt.Sprintf("the paper's conditions (identified): %d runs (listed flags) / %d (no ROI); of them precise: %d / %d",
			s.listed.identified, s.noROI.identified, s.listed.precise, s.noROI.precise),
		fmt.Sprintf("identified within tolerance (precise or not): %d/%d of the cases expected certified (listed flags; no ROI: %d/%d)",
			s.listed.identWithin, s.listed.expectCert, s.noROI.identWithin, s.noROI.expectCert),
		fmt.Sprintf("false certificates: %d (listed flags) / %d (no ROI)", s.listed.falseCerts, s.noROI.falseCerts),
		fmt.Sprintf("false certificates but for the precision condition (identified but outside tolerance or on a not-certified case): %d (listed flags) / %d (no ROI)",
			s.listed.falseIdent, s.noROI.falseIdent),
		"identified but refused for precision: " + orNone(s.imprecise),
		fmt.Sprintf("no ROI: γ0 within 2 %% on %d/%d of the cases expected certified (certified or not)", s.noROI.g0Within2pc, s.noROI.expectCert),
		fmt.Sprintf("σ calibration over the runs with a truth: listed flags %s; no ROI %s", s.listed.calibration(), s.noROI.calibration()),
		fmt.Sprintf("cases as expected (no ROI): %d/%d", s.noROI.asExpected, s.cases),
		fmt.Sprintf("runs that failed (no estimate): %d (listed flags) / %d (no ROI)", s.listed.errors, s.noROI.errors),
		fmt.Sprintf("certified runs labelled undamped (ζ within 2σ of 0): %d (listed flags) / %d (no ROI)", s.listed.certUndamped, s.noROI.certUndamped),
	}
	if len(s.listedExpected) > 0 {
		l = append(l, "not as expected with the listed flags: "+strings.Join(s.listedExpected, ", "))
	}
	return l
}

// orNone joins items with "; ", or is "none".
func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, "; ")
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func reasonsCell(reasons []string) string {
	if len(reasons) == 0 {
		return "—"
	}
	return cell(strings.Join(reasons, "; "))
}

func truthCell(c realvid.Case) string {
	g0, g1 := "—", "—"
	if c.HasGamma0() {
		g0 = fmt.Sprintf("%g ± %g %%", c.Gamma0, 100*c.Gamma0TolRel)
	}
	if c.HasGamma1() {
		g1 = fmt.Sprintf("%g ± %g", c.Gamma1, c.Gamma1TolAbs)
	}
	return g0 + " / " + g1
}

func (r *runResult) expectedCell() string {
	if r.Err != "" {
		return "no (error)"
	}
	j := r.judgement()
	switch {
	case j.FalseCertificate:
		return "**no: false certificate**"
	case j.AsExpected:
		return "yes"
	}
	return "no"
}

func (rep *report) markdown(s summary) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Real footage: physd estimate on the dev set\n\n")
	for _, l := range s.lines() {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	fmt.Fprintf(&b, "\nExpectations and tolerances are truth.tsv's (see its README.md): *certified* means certified with "+
		"|γ0−γ0*| ≤ tol·γ0* and |γ1−γ1*| ≤ tol; *not-certified* means refused; *any* means refused, or certified and within tolerance. "+
		"A false certificate is a certificate outside tolerance, or on a case expected not certified. "+
		"A certificate needs the paper's conditions (coverage, conditioning, fit: *identified*, the answer is unique) and the precision condition "+
		"(σ(f_n)/f_n and σ(ζ) within their limits; the tables' *precision* column: σf is σ(f_n)/f_n and σζ is σ(ζ), each over its limit, ✔ when both are within); "+
		"the identified counts show what the precision condition removed. "+
		"A run that failed (exit status other than 0 or 3, or bad JSON) counts as not as expected. "+
		"The σ calibration counts the runs that gave an estimate, certified or not; a calibrated Gaussian σ would give about 95 %%.\n\n")

	fmt.Fprintf(&b, "## How it was made\n\n")
	if rep.ViaMake {
		fmt.Fprintf(&b, "- command: `make real`, which ran `%s`\n", rep.Command)
	} else {
		fmt.Fprintf(&b, "- command: `%s`\n", rep.Command)
	}
	fmt.Fprintf(&b, "- each case run twice as its own process, `physd estimate --json --plot FIGURE FLAGS VIDEO`: with the listed flags, and with `--roi` removed (physd finds the region where the scene oscillates, or uses the whole frame when nothing does); %d run(s) at a time\n", rep.Jobs)
	fmt.Fprintf(&b, "- machine: %s\n", machine())
	fmt.Fprintf(&b, "- date: %s; all runs took %s\n", rep.Date.Format("2006-01-02 15:04 MST"), rep.Took.Round(time.Second))
	v := rep.Version
	if v == "" {
		v = "unknown (git describe failed)"
	}
	fmt.Fprintf(&b, "- physd version: `%s` (git describe --always --dirty)\n", v)
	fmt.Fprintf(&b, "- wall time: from starting the process to its exit (reading the video, fitting, certifying, drawing the figure)\n\n")

	for _, m := range []mode{modeListed, modeNoROI} {
		title := "Listed flags"
		if m == modeNoROI {
			title = "No ROI (the listed flags without --roi: the automatic region)"
		}
		fmt.Fprintf(&b, "## %s\n\n", title)
		fmt.Fprintf(&b, "| case | expect | truth γ0 / γ1 | ours γ0 ± σ0 | ours γ1 ± σ1 | γ0 error | ζ (regime) | verdict | precision | as expected? | region → frames | readout (others: γ0 / γ1 verdict) | wall time (s) | reasons |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Runs {
			if r.Mode != m {
				continue
			}
			c := r.Case
			if r.Err != "" {
				fmt.Fprintf(&b, "| %s | %s | %s | — | — | — | — | error | — | %s | — | — | %.1f | %s |\n",
					cell(c.Name), c.Expect, truthCell(c), r.expectedCell(), r.Wall.Seconds(), cell(r.Err))
				continue
			}
			e := r.Est
			g0err := "—"
			if c.HasGamma0() {
				g0err = fmt.Sprintf("%+.2f %%", 100*(e.Gamma0-c.Gamma0)/c.Gamma0)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.4f ± %.4f | %.4f ± %.4f | %s | %.4f (%s) | %s | %s | %s | %s | %s | %.1f | %s |\n",
				cell(c.Name), c.Expect, truthCell(c), e.Gamma0, e.Sigma0, e.Gamma1, e.Sigma1, g0err,
				e.Zeta, cell(e.Regime), cell(e.Verdict), cell(e.precisionCell()), r.expectedCell(), cell(e.regionCell()), cell(e.readoutCell()), r.Wall.Seconds(), reasonsCell(e.Reasons))
		}
		fmt.Fprintln(&b)
		fmt.Fprintf(&b, "Arguments after `physd estimate --json --plot FIGURE`:\n\n")
		for _, r := range rep.Runs {
			if r.Mode == m {
				fmt.Fprintf(&b, "- %s: `%s`\n", r.Case.Name, strings.Join(r.Args[4:], " "))
			}
		}
		fmt.Fprintln(&b)
	}

	fmt.Fprintf(&b, "## Figures\n\nEach run's latent, fitted ODE solution, covered levels and crossings (`--plot`).\n\n")
	for _, c := range rep.Cases {
		fmt.Fprintf(&b, "### %s\n\n", c.Name)
		for _, r := range rep.Runs {
			if r.Case.Name != c.Name {
				continue
			}
			if r.Plot == "" {
				fmt.Fprintf(&b, "%s: no figure (%s)\n\n", r.Mode, cell(r.Err))
				continue
			}
			fmt.Fprintf(&b, "![%s, %s](%s)\n\n", c.Name, r.Mode, rep.link(r.Plot))
		}
	}
	return b.Bytes()
}

// link is path relative to the report's directory, with forward slashes.
func (rep *report) link(path string) string {
	dir, err1 := filepath.Abs(filepath.Dir(rep.Out))
	p, err2 := filepath.Abs(path)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(path)
}

// plots counts the figures written.
func (rep *report) plots() int {
	n := 0
	for _, r := range rep.Runs {
		if r.Plot != "" {
			n++
		}
	}
	return n
}
