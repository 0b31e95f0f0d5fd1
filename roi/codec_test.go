//go:build !nocv

package roi_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/physd/physd/roi"
	"github.com/physd/physd/sim"
)

// A cable swinging 1 px at 2 Hz across a textured view, through x264 at
// CRF 18 with its default 250-frame GOP: the codec's texture drift over a
// GOP makes every cell of the view change together at the GOP's
// harmonics (0.12, 0.24 … Hz), more strongly than the thin cable's
// cells oscillate. The region is the cable's, at 2 Hz; the whole view's
// candidate is refused for what it is.
func TestFindCableThroughACodec(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and encodes 20 s of video")
	}
	ctx := context.Background()
	s := sim.Structure{Duration: 20, Seed: 3, Object: sim.ObjectCable, Modes: []sim.Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}}}
	frames, _, err := sim.RenderStructure(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cable.mp4")
	if err := sim.WriteVideo(ctx, path, frames, s.WithDefaults().FPS, sim.Encoding{CRF: 18}); err != nil {
		t.Fatal(err)
	}
	g, err := roi.ScanFile(ctx, path, roi.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := roi.Find([]roi.Clip{g.Clip}, roi.Options{SrcW: g.SrcW, SrcH: g.SrcH})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region %v at %.3f Hz over %d cells", res.Region, res.FreqHz, res.Cells)
	// The cable lies across the middle of the 320×240 view.
	if math.Abs(res.FreqHz-2) > 0.05 || res.Region.Y > 120 || res.Region.Y+res.Region.H < 120 || res.Region.H > 80 {
		t.Errorf("region %v at %.3f Hz; want a band about the cable (y 120) at 2 Hz", res.Region, res.FreqHz)
	}
	whole := false
	for _, a := range res.Alternatives {
		whole = whole || strings.Contains(a.Rejected, "whole view")
		t.Logf("alternative %.3f Hz, %d cells: %s", a.FreqHz, a.Cells, a.Rejected)
	}
	if !whole {
		t.Errorf("no candidate refused as the whole view changing")
	}
}
