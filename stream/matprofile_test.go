//go:build matprofile && !nocv

package stream

import (
	"context"
	"image"
	"testing"

	"gocv.io/x/gocv"
)

// TestNoMatLeaks checks, with `go test -tags matprofile`, that ReadFile and
// Preprocess close every Mat they create, on success and on error.
func TestNoMatLeaks(t *testing.T) {
	path := testsrc20(t)
	before := gocv.MatProfile.Count()
	opts := []FileOptions{
		{},
		{Preprocess: Preprocess{ROI: ROI{X: 8, Y: 8, W: 32, H: 16}, Size: 8, Binarize: true}},
		{From: 0.5, To: 1},
		{Preprocess: Preprocess{ROI: ROI{X: 60, Y: 0, W: 10, H: 10}}},
		{MaxFrames: 3},
		{From: 5},
	}
	for _, o := range opts {
		_, _, _ = ReadFile(context.Background(), path, o)
	}
	img := image.NewGray(image.Rect(0, 0, 20, 10))
	for _, p := range []Preprocess{{}, {Size: 4}, {ROI: ROI{X: 1, Y: 1, W: 5, H: 5}, Binarize: true}, {ROI: ROI{X: 30, W: 1, H: 1}}} {
		_, _ = p.ApplyGray(img)
	}
	if after := gocv.MatProfile.Count(); after != before {
		t.Errorf("%d Mats leaked", after-before)
	}
}
