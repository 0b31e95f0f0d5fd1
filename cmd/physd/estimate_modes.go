package main

import (
	"fmt"
	"io"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// modeReport is one mode of the window (analysis.Report.Modes) as
// physd estimate reports it.
type modeReport struct {
	// Index numbers the modes from 1 by frequency.
	Index  int     `json:"index"`
	Gamma0 float64 `json:"gamma0"`
	Gamma1 float64 `json:"gamma1"`
	Sigma0 float64 `json:"gamma0_sigma"`
	Sigma1 float64 `json:"gamma1_sigma"`
	estimator.Physics
	// AmplitudePx is the mode's envelope where its coordinate starts, in
	// the video's pixels.
	AmplitudePx float64       `json:"amplitude_px,omitempty"`
	Verdict     window.Status `json:"verdict"`
	Certified   bool          `json:"certified"`
	Reasons     []string      `json:"reasons,omitempty"`
	// ResolvesHz: a certified mode is one mode, or modes closer than
	// about this (estimateReport.ResolvesHz).
	ResolvesHz float64 `json:"resolves_hz,omitempty"`
}

// modesReport is the window's modes: the readout they were read from and
// each mode.
type modesReport struct {
	Readout string       `json:"readout"`
	Modes   []modeReport `json:"modes"`
}

// newModesReport reports m (nil: none).
func newModesReport(m *analysis.Modes) *modesReport {
	if m == nil {
		return nil
	}
	out := &modesReport{Readout: m.Readout}
	for _, md := range m.Modes {
		r, v := md.Result, md.Verdict
		mr := modeReport{Index: md.Index, Gamma0: r.Gamma0, Gamma1: r.Gamma1, Sigma0: r.Sigma0, Sigma1: r.Sigma1,
			Physics: r.Physics, Verdict: v.Status, Certified: v.Certified, Reasons: v.Reasons,
			ResolvesHz: resolvesHz(r.Physics, v.Certified)}
		if m.PxPerUnit > 0 {
			mr.AmplitudePx = md.Term.Amplitude() * m.PxPerUnit
		}
		zeroNaN(&mr.Zeta)
		out.Modes = append(out.Modes, mr)
	}
	return out
}

// print writes a line per mode.
func (m *modesReport) print(w io.Writer) {
	if m == nil {
		return
	}
	fmt.Fprintf(w, "modes     %d, read by %s\n", len(m.Modes), m.Readout)
	for _, md := range m.Modes {
		fmt.Fprintf(w, "  mode %d  f_n %.4f ± %.4f Hz  ζ %.4f ± %.4f", md.Index, md.FreqN, md.SigmaF, md.Zeta, md.SigmaZ)
		if md.AmplitudePx > 0 {
			fmt.Fprintf(w, "  %s px", sig3(md.AmplitudePx))
		}
		fmt.Fprintf(w, "  %s", md.Verdict)
		if md.ResolvesHz > 0 {
			fmt.Fprintf(w, " (or modes within %.2g Hz)", md.ResolvesHz)
		}
		if len(md.Reasons) > 0 {
			fmt.Fprintf(w, ": %s", md.Reasons[0])
		}
		fmt.Fprintln(w)
	}
}
