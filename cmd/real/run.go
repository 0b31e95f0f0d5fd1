package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/physd/physd/internal/realvid"
)

// mode is how a case is run.
type mode string

const (
	modeListed mode = "listed flags" // the flags of truth.tsv
	modeNoROI  mode = "no ROI"       // the same without --roi: physd finds the region (or uses the whole frame)
)

// suffix is the figure's file-name suffix.
func (m mode) suffix() string {
	if m == modeNoROI {
		return "-noroi"
	}
	return ""
}

// physd's exit statuses for estimate (cmd/physd/main.go).
const (
	exitCertified    = 0
	exitNotCertified = 3
)

// estimate is the part of 'physd estimate --json' (cmd/physd/estimate.go,
// estimateReport) the report uses; other fields are ignored.
type estimate struct {
	Gamma0    float64  `json:"gamma0"`
	Gamma1    float64  `json:"gamma1"`
	Sigma0    float64  `json:"gamma0_sigma"`
	Sigma1    float64  `json:"gamma1_sigma"`
	Zeta      float64  `json:"zeta"`
	Regime    string   `json:"regime"`
	Verdict   string   `json:"verdict"`
	Certified bool     `json:"certified"`
	Reasons   []string `json:"reasons"`
	Videos    []struct {
		Frames int     `json:"frames"`
		FPS    float64 `json:"fps"`
	} `json:"videos"`
	// Diagnostics.Readout names the latent reported and the other
	// candidates weighed (absent from older physd). Identified says the
	// paper's conditions hold and Precision is the precision condition
	// (both absent from older physd, whose certificate was the paper's
	// conditions alone: decode then takes Identified from Certified).
	Diagnostics struct {
		Identified   *bool     `json:"identified"`
		Precision    precision `json:"precision"`
		Readout      string    `json:"readout"`
		Alternatives []struct {
			Readout string  `json:"readout"`
			Gamma0  float64 `json:"gamma0"`
			Gamma1  float64 `json:"gamma1"`
			Verdict string  `json:"verdict"`
		} `json:"alternatives"`
	} `json:"diagnostics"`
	// hasPrecision: the JSON holds diagnostics.precision.
	hasPrecision bool
	// ROI is the region the estimator saw (absent from older physd).
	ROI *struct {
		Mode   string `json:"mode"`
		Region struct {
			X, Y, W, H int
		} `json:"region"`
		OutW   int `json:"out_w"`
		OutH   int `json:"out_h"`
		Search *struct {
			FreqHz float64 `json:"freq_hz"`
		} `json:"search"`
		Fallback string `json:"fallback"`
	} `json:"roi"`
}

// precision is the certificate's precision condition as physd reports
// it (window.Precision). A number physd wrote as null (non-finite) or not
// at all reads NaN.
type precision struct {
	RelSigmaFn   float64 `json:"rel_sigma_fn"`       // σ(f_n)/f_n
	SigmaZeta    float64 `json:"sigma_zeta"`         // σ(ζ)
	LimitFn      float64 `json:"limit_rel_sigma_fn"` // the limit on RelSigmaFn
	LimitZeta    float64 `json:"limit_sigma_zeta"`   // the limit on SigmaZeta
	Holds        bool    `json:"holds"`
	Data         float64 `json:"data_factor"`     // the information needed, × the window's
	WindowNeeded float64 `json:"window_needed_s"` // a window that would reach the limits (s); 0 if none
	ClipsNeeded  int     `json:"clips_needed"`    // clips like these that would reach them; 0 if none
}

// identified reports whether the paper's conditions hold (Certified for
// an older physd that does not say).
func (e *estimate) identified() bool {
	if e.Diagnostics.Identified == nil {
		return e.Certified
	}
	return *e.Diagnostics.Identified
}

// precise reports whether the precision condition holds; for an older
// physd without one, whether the run is identified (it was not tested).
func (e *estimate) precise() bool {
	if !e.hasPrecision {
		return e.identified()
	}
	return e.Diagnostics.Precision.Holds
}

// sig2 writes x to two significant figures, in full from 100 up, and "—"
// for NaN.
func sig2(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.Abs(x) >= 100 && !math.IsInf(x, 0):
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2g", x)
}

// pct writes a fraction x as a percentage to two significant figures, and
// "—" for NaN.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return sig2(100*x) + " %"
}

// precisionCell is the precision condition: σ(f_n)/f_n and σ(ζ) against
// their limits, and whether both are within them; "—" for an older physd.
func (e *estimate) precisionCell() string {
	if !e.hasPrecision {
		return "—"
	}
	p := e.Diagnostics.Precision
	mark := "✘"
	if p.Holds {
		mark = "✔"
	}
	return fmt.Sprintf("σf %s / %s, σζ %s / %s %s", pct(p.RelSigmaFn), pct(p.LimitFn), sig2(p.SigmaZeta), sig2(p.LimitZeta), mark)
}

// impreciseText is an identified run's refusal for precision: σ(f_n)/f_n
// and σ(ζ) against their limits, and the window or clips that would
// reach them.
func (e *estimate) impreciseText() string {
	p := e.Diagnostics.Precision
	s := fmt.Sprintf("σ(f_n)/f_n %s (limit %s), σ(ζ) %s (limit %s)", pct(p.RelSigmaFn), pct(p.LimitFn), sig2(p.SigmaZeta), sig2(p.LimitZeta))
	switch {
	case p.ClipsNeeded > 0:
		s += fmt.Sprintf(", about %d clips would reach both", p.ClipsNeeded)
	case p.WindowNeeded > 0:
		s += fmt.Sprintf(", a window of about %s s would reach both", sig2(p.WindowNeeded))
	}
	return s
}

// regionCell describes the region a run used: its mode, the crop in the
// video's pixels and the frame size the estimator saw; for an automatic
// region the frequency it oscillates at; for an automatic search that
// found nothing, that it fell back to the whole frame.
func (e estimate) regionCell() string {
	r := e.ROI
	if r == nil {
		return "—"
	}
	g := r.Region
	s := fmt.Sprintf("%s %d,%d,%d,%d → %d×%d", r.Mode, g.X, g.Y, g.W, g.H, r.OutW, r.OutH)
	if r.Search != nil {
		s += fmt.Sprintf(" (%.3g Hz)", r.Search.FreqHz)
	}
	if r.Fallback != "" {
		s += " (nothing found oscillating)"
	}
	return s
}

// runResult is one run of one case.
type runResult struct {
	Case realvid.Case
	Mode mode
	Args []string      // physd's arguments
	Plot string        // the figure written, "" if none
	Wall time.Duration // process start to exit
	Est  estimate      // when Err is ""
	Err  string        // why the run gave no estimate
}

func (r *runResult) outcome() realvid.Outcome {
	e := &r.Est
	p := e.Diagnostics.Precision
	return realvid.Outcome{Certified: e.Certified, Identified: e.identified(),
		Gamma0: e.Gamma0, Gamma1: e.Gamma1, Sigma0: e.Sigma0, Sigma1: e.Sigma1,
		RelSigmaFn: p.RelSigmaFn, SigmaZeta: p.SigmaZeta, LimitFn: p.LimitFn, LimitZeta: p.LimitZeta,
		PrecisionHolds: e.precise()}
}

// judgement judges a run that gave an estimate; an error run is neither
// as expected nor a false certificate.
func (r *runResult) judgement() realvid.Judgement {
	if r.Err != "" {
		return realvid.Judgement{}
	}
	return r.Case.Judge(r.outcome())
}

// execute runs physd for r and fills in the rest of r.
func execute(ctx context.Context, cfg config, r *runResult) {
	flags := r.Case.Args
	if r.Mode == modeNoROI {
		flags = realvid.WithoutROI(flags)
	}
	plot := filepath.Join(cfg.plots, r.Case.Name+r.Mode.suffix()+".png")
	if err := os.Remove(plot); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.Err = fmt.Sprintf("removing the old figure: %v", err)
		return
	}
	r.Args = append(append([]string{"estimate", "--json", "--plot", plot}, flags...), r.Case.Path(cfg.dir))
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.bin, r.Args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.Wall = time.Since(start)
	if _, serr := os.Stat(plot); serr == nil {
		r.Plot = plot
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() < 0 {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w (after %s)", ctx.Err(), r.Wall.Round(time.Second))
			}
			r.Err = withStderr(err.Error(), stderr.String())
			return
		}
		code = ee.ExitCode()
	}
	if code != exitCertified && code != exitNotCertified {
		r.Err = withStderr(fmt.Sprintf("exit status %d", code), stderr.String())
		return
	}
	est, err := decode(stdout.Bytes())
	if err != nil {
		r.Err = withStderr(err.Error(), stderr.String())
		return
	}
	if est.Certified != (code == exitCertified) {
		r.Err = fmt.Sprintf("exit status %d but the JSON says certified=%v", code, est.Certified)
		return
	}
	r.Est = est
}

// decode reads one JSON object and checks it has the fields the report
// needs.
func decode(b []byte) (estimate, error) {
	var need map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&need); err != nil {
		return estimate{}, fmt.Errorf("bad JSON on stdout: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return estimate{}, errors.New("bad JSON on stdout: more than one value")
	}
	for _, k := range []string{"gamma0", "gamma1", "gamma0_sigma", "gamma1_sigma", "verdict", "certified"} {
		if v, ok := need[k]; !ok || string(v) == "null" {
			return estimate{}, fmt.Errorf("bad JSON on stdout: no %q", k)
		}
	}
	var e estimate
	// A null (physd's non-finite number) or a missing number leaves NaN.
	nan := math.NaN()
	e.Diagnostics.Precision = precision{RelSigmaFn: nan, SigmaZeta: nan, LimitFn: nan, LimitZeta: nan, Data: nan}
	if err := json.Unmarshal(b, &e); err != nil {
		return estimate{}, fmt.Errorf("bad JSON on stdout: %w", err)
	}
	for _, f := range []float64{e.Gamma0, e.Gamma1, e.Sigma0, e.Sigma1} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return estimate{}, errors.New("bad JSON on stdout: a non-finite estimate")
		}
	}
	var diag map[string]json.RawMessage
	if d, ok := need["diagnostics"]; ok && json.Unmarshal(d, &diag) == nil {
		if v, ok := diag["precision"]; ok && string(v) != "null" {
			e.hasPrecision = true
		}
	}
	// The certificate is the paper's conditions and the precision one.
	if e.Diagnostics.Identified != nil && e.hasPrecision && e.Certified != (*e.Diagnostics.Identified && e.Diagnostics.Precision.Holds) {
		return estimate{}, fmt.Errorf("bad JSON on stdout: certified=%v, but identified=%v and precision holds=%v",
			e.Certified, *e.Diagnostics.Identified, e.Diagnostics.Precision.Holds)
	}
	return e, nil
}

// withStderr adds stderr's last non-empty line to msg.
func withStderr(msg, stderr string) string {
	if l := lastLine(stderr); l != "" {
		return msg + ": " + l
	}
	return msg
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// gitDescribe is 'git describe --always --dirty' of the working
// directory, or "" when git cannot tell.
func gitDescribe(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// readoutCell names the latent a run reported and the candidates it was
// weighed against, each with its answer and verdict.
func (e *estimate) readoutCell() string {
	d := e.Diagnostics
	if d.Readout == "" {
		return "—"
	}
	s := d.Readout
	for _, a := range d.Alternatives {
		s += fmt.Sprintf("; %s: %.4g / %.3g %s", a.Readout, a.Gamma0, a.Gamma1, a.Verdict)
	}
	return s
}
