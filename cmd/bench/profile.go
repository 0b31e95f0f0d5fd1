package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
)

// profileOptions is one 'physd estimate' run done in this process, for a
// CPU profile and a per-stage split of its wall time (flag -profile-video).
type profileOptions struct {
	video, roi, out string
	from, to        float64
}

// profileEstimate reads, fits and certifies one video as 'physd estimate'
// does (edge preset, seed 1) and prints the wall time of each stage; with
// out set it writes a CPU profile of the whole run there (go tool pprof).
func profileEstimate(ctx context.Context, o profileOptions) error {
	roi, err := parseROI(o.roi)
	if err != nil {
		return err
	}
	p, err := estimator.LookupPreset(estimator.DefaultPreset)
	if err != nil {
		return err
	}
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	frames, tm, err := stream.ReadFile(ctx, o.video, stream.FileOptions{
		Preprocess: stream.Preprocess{ROI: roi, Size: p.Size, Binarize: p.Binarize},
		From:       o.from, To: o.to,
	})
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	t1 := time.Now()
	c := window.ClipOf(frames, 1/tm.FPS)
	res, err := estimator.Fit(ctx, []estimator.Clip{c}, estimator.Options{Preset: p, Seed: 1})
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	t2 := time.Now()
	v := window.Certify(res, window.Thresholds{}, nil)
	t3 := time.Now()
	var unc time.Duration
	if res.Uncertainty != nil {
		unc = res.Uncertainty.Elapsed
	}
	fmt.Printf("%s: %d frames at %.4g fps: γ0 %.17g γ1 %.17g σ (%.6g, %.6g) %s\n",
		o.video, len(frames), tm.FPS, res.Gamma0, res.Gamma1, res.Sigma0, res.Sigma1, v.Status)
	fmt.Printf("  read %.3f s, fit %.3f s (of which σ %.3f s), certify %.3f s, total %.3f s\n",
		t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), unc.Seconds(), t3.Sub(t2).Seconds(), t3.Sub(t0).Seconds())
	return nil
}

// parseROI reads x,y,w,h as 'physd estimate --roi' does; "" is the whole
// frame.
func parseROI(s string) (stream.ROI, error) {
	if s == "" {
		return stream.ROI{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return stream.ROI{}, fmt.Errorf("-profile-roi %q: want x,y,w,h", s)
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return stream.ROI{}, fmt.Errorf("-profile-roi %q: %w", s, err)
		}
		v[i] = n
	}
	return stream.ROI{X: v[0], Y: v[1], W: v[2], H: v[3]}, nil
}
