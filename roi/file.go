package roi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/physd/physd/stream"
)

// Grid is what a search reads from a video: its segment at the search's
// grid resolution, and the source frame's size.
type Grid struct {
	Clip
	// SrcW and SrcH are the source frame's size in pixels.
	SrcW, SrcH int
	// Truncated: the segment held more than MaxSamples cells × frames, and
	// only its first Frames were kept.
	Truncated bool
}

// Preprocess is the preprocessing that makes a search's grid frames from a
// source: the whole frame, gray, area-resized to about GridSize² cells
// with its aspect ratio kept.
func Preprocess() stream.Preprocess { return stream.Preprocess{Size: GridSize} }

// ScanOptions selects the segment ScanFile reads.
type ScanOptions struct {
	// From and To bound the segment in seconds (To 0: the end), as
	// stream.FileOptions.
	From, To float64
	// FPS > 0 overrides the container's frame rate, as
	// stream.FileOptions.FPS.
	FPS float64
}

// errEnough stops ScanFile's decoding.
var errEnough = errors.New("enough frames")

// ScanFile decodes the segment [From, To) of the video at path once, at
// the search's grid resolution, without keeping full-size frames: the first
// of the two passes over a file (the second reads the region found at the
// estimator's resolution). Errors name the path.
func ScanFile(ctx context.Context, path string, opt ScanOptions) (Grid, error) {
	src, err := stream.NewFileSource(path, stream.FileSourceOptions{Preprocess: Preprocess(), FPS: opt.FPS})
	if err != nil {
		return Grid{}, fmt.Errorf("roi: scan: %w", err)
	}
	from := time.Duration(math.Round(opt.From * float64(time.Second)))
	to := time.Duration(math.Round(opt.To * float64(time.Second)))
	var frames []stream.Frame
	truncated := false
	err = src.Run(ctx, func(f stream.Frame) error {
		if to > 0 && f.Time >= to {
			return errEnough
		}
		if f.Time < from {
			return nil
		}
		if (len(frames)+1)*f.W*f.H > MaxSamples {
			truncated = true
			return errEnough
		}
		frames = append(frames, f)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) && !errors.Is(err, io.EOF) {
		return Grid{}, fmt.Errorf("roi: scan %s: %w", path, err)
	}
	g, err := FromFrames(frames, opt.FPS)
	if err != nil {
		return Grid{}, fmt.Errorf("roi: scan %s (segment %g–%g s): %w", path, opt.From, opt.To, err)
	}
	g.Truncated = truncated
	return g, nil
}

// FromFrames turns grid frames (made with Preprocess, in capture order)
// into a Grid. The frame time is 1/fps when fps > 0, else the median step
// of the frames' times. Frames must share one size.
func FromFrames(frames []stream.Frame, fps float64) (Grid, error) {
	if len(frames) < minFrames {
		return Grid{}, fmt.Errorf("%d frames, need at least %d: %w", len(frames), minFrames, ErrInput)
	}
	f0 := frames[0]
	g := Grid{Clip: Clip{W: f0.W, H: f0.H}, SrcW: f0.SrcW, SrcH: f0.SrcH}
	if g.SrcW == 0 || g.SrcH == 0 {
		g.SrcW, g.SrcH = f0.W, f0.H
	}
	steps := make([]float64, 0, len(frames)-1)
	for i, f := range frames {
		if f.W != f0.W || f.H != f0.H || len(f.Pix) != f.W*f.H || f.SrcW != f0.SrcW || f.SrcH != f0.SrcH {
			return Grid{}, fmt.Errorf("frame %d: %d×%d of %d×%d differs from frame 0's %d×%d of %d×%d: %w",
				i, f.W, f.H, f.SrcW, f.SrcH, f0.W, f0.H, f0.SrcW, f0.SrcH, ErrInput)
		}
		px := make([]float32, len(f.Pix))
		for j, v := range f.Pix {
			px[j] = float32(v)
		}
		g.Frames = append(g.Frames, px)
		if i > 0 {
			steps = append(steps, (f.Time - frames[i-1].Time).Seconds())
		}
	}
	if fps > 0 {
		g.Dt = 1 / fps
	} else {
		slices.Sort(steps)
		g.Dt = steps[len(steps)/2]
	}
	if !(g.Dt > 0) {
		return Grid{}, fmt.Errorf("frame times do not increase (median step %v s): %w", g.Dt, ErrInput)
	}
	return g, nil
}
