package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/physd/physd/ambient"
	"github.com/physd/physd/analysis"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/frame"
	"github.com/physd/physd/roi"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
)

// ambientFlags are physd estimate's flags for an ambient record.
type ambientFlags struct {
	on        bool
	calibrate float64 // seconds of frames the readout is calibrated on
	maxLag    float64 // seconds of lags summed
}

// ambientReport is physd estimate --ambient's JSON.
type ambientReport struct {
	Video  string     `json:"video"`
	FPS    float64    `json:"fps"`
	ROI    *roiReport `json:"roi,omitempty"`
	Gamma0 float64    `json:"gamma0"`
	Gamma1 float64    `json:"gamma1"`
	Sigma0 float64    `json:"gamma0_sigma"`
	Sigma1 float64    `json:"gamma1_sigma"`
	estimator.Physics
	Verdict   window.Status `json:"verdict"`
	Certified bool          `json:"certified"`
	Reasons   []string      `json:"reasons,omitempty"`
	// Ambient is the record's signature, its fit and the ambient checks.
	Ambient *ambient.Estimate `json:"ambient"`
	// Modes are the record's modes when its signature holds several,
	// each identified and certified on its own; absent otherwise. The
	// top-level estimate and the exit status stay the one-mode fit's.
	Modes *modesReport `json:"modes,omitempty"`
	// Readout is the frozen readout: pixels read and the direction.
	Readout struct {
		Binned     int        `json:"binned"`
		Pixels     int        `json:"pixels"`
		Dir        [2]float64 `json:"direction"`
		CalibrateS float64    `json:"calibrate_s"`
		RMSPx      float64    `json:"rms_px"`
		Explained  float64    `json:"explained"`
	} `json:"readout"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// estimateAmbient identifies a structure's mode from an ambient record:
// the video's frames are read one at a time (never held but for the
// calibration's), each turned into a displacement by a frozen readout
// (flow.Linear, calibrated on the first seconds' flow.Reading), and the
// displacements' correlation is fitted and certified (package ambient).
//
// th's precision limits, when set, replace the ambient defaults
// (ambient.DefaultMaxRelSigmaFn, ambient.DefaultMaxRelSigmaZeta).
func estimateAmbient(ctx context.Context, af ambientFlags, path string, sel roiChoice, fps float64, size int, th window.Thresholds, asJSON bool,
	stdout io.Writer, log *slog.Logger) (int, error) {
	start := time.Now()
	pre, roiRep, err := chooseRegion(ctx, sel, []string{path}, roi.ScanOptions{To: af.calibrate, FPS: fps}, stream.Preprocess{Size: size}, log)
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	rec, err := readRecord(ctx, path, pre, fps, af.calibrate)
	var cal *calibrationError
	if errors.As(err, &cal) && roiRep != nil && roiRep.Mode == roiAuto && !sel.strict {
		// The region found to oscillate can be too small for the readout
		// (a few pixels across a thin cable): read the whole frame.
		log.Info("ambient readout: the automatic region cannot be read; using the whole frame", "why", err.Error())
		pre = stream.Preprocess{Size: size}
		roiRep = &roiReport{Mode: roiFull, Fallback: err.Error()}
		rec, err = readRecord(ctx, path, pre, fps, af.calibrate)
	}
	if err != nil {
		return 0, fmt.Errorf("estimate: %w", err)
	}
	lat, lin, read, dt := rec.lat, rec.lin, rec.read, rec.dt
	lags := int(math.Round(af.maxLag / dt))
	if 4*lags > len(lat) {
		lags = len(lat) / 4
	}
	c, err := ambient.NewCorrelation(lags+1, (len(lat)+ambient.DefaultGroups-1)/ambient.DefaultGroups, ambient.DefaultGroups)
	if err != nil {
		return 0, fmt.Errorf("estimate: %s: %w", path, err)
	}
	for _, z := range lat {
		c.Push(z)
	}
	est, err := ambient.Identify(ctx, c, dt, ambient.Options{Thresholds: th})
	if err != nil {
		return 0, fmt.Errorf("estimate: %s: %w", path, err)
	}
	r, v := est.Result, est.Verdict
	rep := ambientReport{Video: path, FPS: 1 / dt, ROI: roiRep, Gamma0: r.Gamma0, Gamma1: r.Gamma1, Sigma0: r.Sigma0, Sigma1: r.Sigma1,
		Physics: r.Physics, Verdict: v.Status, Certified: v.Certified, Reasons: v.Reasons, Ambient: est,
		ElapsedMS: float64(time.Since(start)) / float64(time.Millisecond)}
	rep.Readout.Binned, rep.Readout.Pixels, rep.Readout.Dir, rep.Readout.CalibrateS = read.Binned, lin.Pixels, lin.Dir, af.calibrate
	rep.Readout.RMSPx, rep.Readout.Explained = est.RMS*sourcePx(roiRep, pre, lin.W), read.Explained
	if len(est.Modes) > 0 {
		rep.Modes = newModesReport(&analysis.Modes{Readout: "signature", Modes: est.Modes})
	}
	if asJSON {
		rep.finite()
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 0, fmt.Errorf("estimate: %w", err)
		}
	} else {
		fmt.Fprintf(stdout, "%s: ambient record %.0f s (%d frames at %.4g fps), %d lags (%.1f s) fitted, kurtosis %.2f, %.3g px rms\n",
			path, est.Record, est.Frames, 1/dt, est.Lags, est.LagSpan, est.Kurtosis, rep.Readout.RMSPx)
		fmt.Fprintf(stdout, "f_n = %.5g ± %.2g Hz, ζ = %.4g ± %.2g (γ0 = %.6g ± %.2g, γ1 = %.4g ± %.2g): %s\n",
			r.FreqN, r.SigmaF, r.Zeta, r.SigmaZ, r.Gamma0, r.Sigma0, r.Gamma1, r.Sigma1, v.Status)
		if est.ResolvesHz > 0 {
			fmt.Fprintf(stdout, "one mode, or modes closer than about %.2g Hz: this record's bend test refuses half the pairs of equal modes that far apart\n", est.ResolvesHz)
		}
		for _, why := range v.Reasons {
			fmt.Fprintf(stdout, "  - %s\n", why)
		}
		rep.Modes.print(stdout)
	}
	if !v.Certified {
		return exitNotCertified, nil
	}
	return exitOK, nil
}

// record is an ambient record as read: its latents, the frozen readout
// and the reading it was calibrated on, and the frame step.
type record struct {
	lat  []float64
	lin  *flow.Linear
	read *flow.Reading
	dt   float64
}

// calibrationError is a readout that could not be calibrated.
type calibrationError struct{ err error }

func (e *calibrationError) Error() string { return e.err.Error() }
func (e *calibrationError) Unwrap() error { return e.err }

// readRecord reads the video frame by frame through pre: the first
// calibrate seconds are held and calibrate the frozen readout
// (flow.CalibrateAuto), every frame after is read by it and dropped.
func readRecord(ctx context.Context, path string, pre stream.Preprocess, fps, calibrate float64) (*record, error) {
	src, err := stream.NewFileSource(path, stream.FileSourceOptions{Preprocess: pre, FPS: fps})
	if err != nil {
		return nil, err
	}
	var calib []frame.Frame
	rec := &record{}
	emit := func(f frame.Frame) error {
		if rec.lin != nil {
			rec.lat = append(rec.lat, rec.lin.Read(f.Pix))
			return nil
		}
		f.Pix = append([]float64(nil), f.Pix...)
		calib = append(calib, f)
		if (f.Time - calib[0].Time).Seconds() < calibrate {
			return nil
		}
		n := len(calib)
		rec.dt = (calib[n-1].Time - calib[0].Time).Seconds() / float64(n-1)
		var err error
		if rec.lin, rec.read, err = flow.CalibrateAuto(window.ClipOf(calib, rec.dt)); err != nil {
			return &calibrationError{fmt.Errorf("%s: the readout's calibration on the first %.0f s: %w", path, calibrate, err)}
		}
		for _, c := range calib {
			rec.lat = append(rec.lat, rec.lin.Read(c.Pix))
		}
		calib = nil
		return nil
	}
	if err := src.Run(ctx, emit); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if rec.lin == nil {
		return nil, fmt.Errorf("%s: %d frames, shorter than the readout's calibration (%.0f s; see --calibrate)", path, len(calib), calibrate)
	}
	return rec, nil
}

// finite zeroes what JSON cannot carry: the NaN ζ of a fit with γ0 ≤ 0,
// an empty coverage's bounds.
func (r *ambientReport) finite() {
	for _, f := range []*float64{&r.Zeta, &r.SigmaZ, &r.SigmaF, &r.FreqN, &r.FreqD, &r.OmegaN} {
		zeroNaN(f)
	}
	if a := r.Ambient; a != nil {
		zeroVerdictNaN(&a.Verdict)
		for _, f := range []*float64{&a.Kurtosis, &a.RMS, &a.Bend, &a.BendSigma, &a.Peak, &a.PeakSigma, &a.ResolvesHz} {
			zeroNaN(f)
		}
		for _, s := range [][]float64{a.Signature, a.Fitted} {
			for i := range s {
				zeroNaN(&s[i])
			}
		}
	}
}

// sourcePx is how many of the video's pixels a frame pixel spans.
func sourcePx(rep *roiReport, pre stream.Preprocess, w int) float64 {
	regionW := pre.ROI.W
	if pre.ROI.IsZero() && rep != nil {
		regionW = rep.SrcW
	}
	if regionW <= 0 || w <= 0 {
		return 1
	}
	return float64(regionW) / float64(w)
}
