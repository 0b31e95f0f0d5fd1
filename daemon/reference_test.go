package daemon

import (
	"context"
	"log/slog"
	"math"
	"testing"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// texture is a smooth w×h pattern moved by (dx, dy).
func texture(w, h int, dx, dy float64) []float64 {
	out := make([]float64, w*h)
	for y := range h {
		for x := range w {
			u, v := float64(x)-dx, float64(y)-dy
			out[y*w+x] = 0.5 + 0.2*math.Sin(u/3.1+v/7.3) + 0.15*math.Cos(u/5.7-v/2.9)
		}
	}
	return out
}

// With a reference region the camera's motion is measured on its patches,
// scaled into the estimator's pixels and removed from the window's frames;
// a reference that shows nothing to align falls back to measuring the
// motion from the frames themselves.
func TestCameraMotionReference(t *testing.T) {
	const n, fw, fh, pw, ph = 60, 32, 32, 40, 30
	// The ROI is 64×64 source pixels read as 32×32; the reference 40×30
	// source pixels read at its own size: a source pixel is half a frame
	// pixel.
	cc := config.Camera{Name: "c", ROI: config.ROI{X: 100, Y: 100, W: 64, H: 64}, Reference: config.ROI{X: 0, Y: 0, W: pw, H: ph}}
	c := &learning{roi: cc.ROI, reference: cc.Reference, log: slog.New(slog.DiscardHandler)}
	var clip estimator.Clip
	clip.W, clip.H, clip.Dt = fw, fh, 0.05
	var refs [][]float64
	for k := range n {
		dx, dy := 3*math.Sin(float64(k)/4), 2*math.Cos(float64(k)/6)
		refs = append(refs, texture(pw, ph, dx, dy))
		clip.Frames = append(clip.Frames, texture(fw, fh, dx/2, dy/2))
	}
	before := clip.Frames
	j := job{clips: []estimator.Clip{clip}, refs: [][][]float64{refs}, refW: pw, refH: ph, srcW: 640, srcH: 480}
	tr, err := c.motionOf(j).Measure(context.Background(), j.clips, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source != motion.SourceReference || !tr.Detected || !tr.Applied {
		t.Fatalf("track: %s", tr.Summary())
	}
	// The track is relative to the median position; differences between
	// frames are the shifts in frame pixels.
	for k := 1; k < n; k++ {
		got := tr.Shifts[0][k].Sub(tr.Shifts[0][0])
		want := motion.Shift{X: 1.5 * (math.Sin(float64(k)/4) - math.Sin(0)), Y: (math.Cos(float64(k)/6) - 1)}
		if got.Sub(want).Norm() > 0.05 {
			t.Fatalf("frame %d: shift %v relative to frame 0, want %v", k, got, want)
		}
	}
	if &j.clips[0].Frames[0][0] == &before[0][0] {
		t.Error("frames not moved back")
	}

	plain := make([][]float64, n)
	for k := range plain {
		plain[k] = make([]float64, pw*ph)
	}
	j = job{clips: []estimator.Clip{clip}, refs: [][][]float64{plain}, refW: pw, refH: ph, srcW: 640, srcH: 480}
	if tr, err := c.motionOf(j).Measure(context.Background(), j.clips, nil); err != nil || tr.Source != motion.SourceAuto {
		t.Errorf("a plain reference: %v, %v; want the motion measured from the frames", tr, err)
	}
}
