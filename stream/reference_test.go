//go:build !nocv

package stream

import (
	"errors"
	"image"
	"slices"
	"strings"
	"testing"

	"gocv.io/x/gocv"
)

// A frame preprocessed with a reference region carries that region's gray
// patch, the same through OpenCV (Apply) and in pure Go (ApplyGray), at
// its own size up to 128² pixels and resized above; a reference outside
// the frame is an error naming it.
func TestPreprocessReference(t *testing.T) {
	const w, h = 320, 240
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8((i*7 + i/w*13) % 251)
	}
	m, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, img.Pix)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct {
		ref        ROI
		pw, ph     int
		sameAsCrop bool
	}{
		{ROI{X: 10, Y: 20, W: 40, H: 30}, 40, 30, true},
		{ROI{X: 0, Y: 0, W: 300, H: 200}, 157, 105, false},
	} {
		p := Preprocess{ROI: ROI{X: 100, Y: 100, W: 64, H: 64}, Size: 32, Reference: c.ref}
		g, err := p.ApplyGray(img)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := p.Apply(m)
		if err != nil {
			t.Fatal(err)
		}
		if g.RefW != c.pw || g.RefH != c.ph || len(g.Ref) != c.pw*c.ph || cv.RefW != c.pw || cv.RefH != c.ph {
			t.Fatalf("reference %+v: patch %dx%d (%d) and %dx%d through OpenCV, want %dx%d", c.ref, g.RefW, g.RefH, len(g.Ref), cv.RefW, cv.RefH, c.pw, c.ph)
		}
		if g.W != 32 || g.H != 32 {
			t.Errorf("the frame itself changed: %dx%d", g.W, g.H)
		}
		if c.sameAsCrop {
			crop, err := Preprocess{ROI: c.ref}.ApplyGray(img)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.Ref, crop.Pix) || !slices.Equal(cv.Ref, crop.Pix) {
				t.Errorf("reference %+v: patch differs from the region's pixels", c.ref)
			}
		}
		for i := range g.Ref {
			if d := g.Ref[i] - cv.Ref[i]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("reference %+v: pixel %d is %v in Go, %v through OpenCV", c.ref, i, g.Ref[i], cv.Ref[i])
			}
		}
	}
	if f, err := (Preprocess{Size: 32}).ApplyGray(img); err != nil || f.Ref != nil {
		t.Errorf("no reference: patch %v, %v", f.Ref, err)
	}
	_, err = Preprocess{Reference: ROI{X: 300, Y: 0, W: 40, H: 10}}.ApplyGray(img)
	if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "reference") {
		t.Errorf("a reference outside the frame: %v", err)
	}
	_, err = Preprocess{Reference: ROI{X: 1, Y: 1, W: 0, H: 10}}.ApplyGray(img)
	if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "reference") {
		t.Errorf("a reference without a width: %v", err)
	}
}
