package stream

import (
	"errors"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPreprocessValidate(t *testing.T) {
	bad := []struct {
		p     Preprocess
		field string
	}{
		{Preprocess{Size: -1}, "Size"},
		{Preprocess{Threshold: 1}, "Threshold"},
		{Preprocess{Threshold: -0.1}, "Threshold"},
		{Preprocess{Threshold: math.NaN()}, "Threshold"},
		{Preprocess{ROI: ROI{X: 1, W: 0, H: 5}}, "ROI"},
		{Preprocess{ROI: ROI{X: -1, W: 2, H: 2}}, "ROI"},
		{Preprocess{ROI: ROI{W: 2, H: -2}}, "ROI"},
		{Preprocess{Width: 10}, "Width×Height"},
		{Preprocess{Height: 10}, "Width×Height"},
		{Preprocess{Width: -1, Height: 4}, "Width×Height"},
		{Preprocess{Width: MaxSize + 1, Height: 4}, "Width×Height"},
	}
	for _, tc := range bad {
		err := tc.p.Validate()
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v.Validate() = %v, want ErrInvalidOption naming %s", tc.p, err, tc.field)
		}
	}
	for _, p := range []Preprocess{{}, {Size: 8, Binarize: true}, {Threshold: 0.99}, {ROI: ROI{W: 1, H: 1}}, {Width: 3, Height: 9}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v", p, err)
		}
	}
	if err := (Preprocess{ROI: ROI{X: 60, Y: 0, W: 10, H: 10}}).CheckFrame(64, 48); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("ROI outside the frame: %v", err)
	}
}

func TestApplyGraySubImage(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 10, 8))
	for y := 0; y < 8; y++ {
		for x := 0; x < 10; x++ {
			img.SetGray(x, y, color.Gray{Y: uint8(10*y + x)})
		}
	}
	sub := img.SubImage(image.Rect(3, 2, 7, 5)).(*image.Gray) // stride 10, offset (3,2)
	f, err := Preprocess{}.ApplyGray(sub)
	if err != nil {
		t.Fatal(err)
	}
	if f.W != 4 || f.H != 3 {
		t.Fatalf("size %dx%d", f.W, f.H)
	}
	for y := 0; y < 3; y++ {
		for x := 0; x < 4; x++ {
			want := float64(10*(y+2)+x+3) / 255
			if got := f.Pix[y*4+x]; math.Abs(got-want) > 1e-12 {
				t.Fatalf("Pix(%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
}

// TestOutputSizeKeepsAspect: a crop is resized to about Size² pixels
// without distortion; a square crop to Size×Size (the synthetic cameras'
// 64×64 frames are unchanged); Width×Height overrides both.
func TestOutputSizeKeepsAspect(t *testing.T) {
	for _, tc := range []struct {
		p          Preprocess
		w, h       int
		wantW, wtH int
	}{
		{Preprocess{Size: 64}, 64, 64, 64, 64},
		{Preprocess{Size: 64}, 480, 480, 64, 64},
		{Preprocess{Size: 64}, 590, 40, 246, 17},
		{Preprocess{Size: 64}, 640, 480, 74, 55},
		{Preprocess{Size: 64}, 70, 380, 27, 149},
		{Preprocess{Size: 64}, 20, 10, 91, 45}, // enlarged, as a square crop is
		{Preprocess{Size: 64}, 4096, 1, 512, MinSide},
		{Preprocess{Size: 4}, 100, 1, 4, 4},
		{Preprocess{Size: 0}, 590, 40, 590, 40},
		{Preprocess{Size: 64, Width: 30, Height: 20}, 590, 40, 30, 20},
	} {
		if w, h := tc.p.OutputSize(tc.w, tc.h); w != tc.wantW || h != tc.wtH {
			t.Errorf("%+v.OutputSize(%d, %d) = %d×%d, want %d×%d", tc.p, tc.w, tc.h, w, h, tc.wantW, tc.wtH)
		}
	}
}

// TestApplyGrayKeepsShape: a disc in a wide crop stays a disc: its extent
// along x and y in the output are equal within a pixel, where a resize to
// Size×Size would squash it 15-fold.
func TestApplyGrayKeepsShape(t *testing.T) {
	const w, h = 590, 40
	img := image.NewGray(image.Rect(0, 0, w, h))
	cx, cy, r := 300.0, 20.0, 15.0
	for y := range h {
		for x := range w {
			if math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy) < r {
				img.SetGray(x, y, color.Gray{Y: 255})
			}
		}
	}
	f, err := Preprocess{Size: 64}.ApplyGray(img)
	if err != nil {
		t.Fatal(err)
	}
	if f.W != 246 || f.H != 17 {
		t.Fatalf("output %d×%d, want 246×17", f.W, f.H)
	}
	// The disc's diameter along x (its middle row) and along y (its middle
	// column), counting output pixels more than half covered, in source
	// pixels.
	sx, sy := float64(w)/float64(f.W), float64(h)/float64(f.H)
	diamX, diamY := 0.0, 0.0
	for x := range f.W { // widest row's extent along x
		if f.Pix[(f.H/2)*f.W+x] > 0.5 {
			diamX += sx
		}
	}
	for y := range f.H {
		if f.Pix[y*f.W+int(cx/sx)] > 0.5 {
			diamY += sy
		}
	}
	if math.Abs(diamX-diamY) > 1.5*max(sx, sy) || math.Abs(diamX-2*r) > 2*max(sx, sy) {
		t.Errorf("disc of diameter %v: %.1f wide and %.1f tall in the output (source pixels)", 2*r, diamX, diamY)
	}
}

// TestLevelsAsRead checks that mapping a decoder's luma as it is read
// (grayScratch.levels) gives, to the bit, what mapping the whole picture
// first gives: the region, its resize, the reference patch, the
// whole-frame gray copy and the thumbnail.
func TestLevelsAsRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	const w, h = 97, 61
	raw := image.NewGray(image.Rect(0, 0, w, h))
	for i := range raw.Pix {
		raw.Pix[i] = byte(rng.IntN(256))
	}
	lv := videoLevels()
	mapped := image.NewGray(raw.Rect)
	for i, v := range raw.Pix {
		mapped.Pix[i] = lv[v]
	}
	for name, pre := range map[string]Preprocess{
		"region resized":  {ROI: ROI{X: 5, Y: 9, W: 80, H: 30}, Size: 16},
		"region as it is": {ROI: ROI{X: 5, Y: 9, W: 20, H: 10}, Width: 20, Height: 10},
		"reference":       {Size: 24, Reference: ROI{X: 60, Y: 2, W: 30, H: 20}},
		"whole in gray":   {Gray: true},
	} {
		thA, thB := &Thumbnailer{Interval: time.Hour}, &Thumbnailer{Interval: time.Hour}
		a, b := pre, pre
		a.Thumb, b.Thumb = thA, thB
		got, err := a.applyGray(raw, &grayScratch{levels: lv})
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.applyGray(mapped, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Pix, want.Pix) || !slices.Equal(got.Ref, want.Ref) || got.W != want.W || got.H != want.H {
			t.Errorf("%s: %d×%d frame (ref %d px) differs from the mapped picture's %d×%d (ref %d px)", name, got.W, got.H, len(got.Ref), want.W, want.H, len(want.Ref))
		}
		if (got.Gray == nil) != (want.Gray == nil) || got.Gray != nil && !slices.Equal(got.Gray.Pix, want.Gray.Pix) {
			t.Errorf("%s: whole-frame gray differs", name)
		}
		ta, okA := thA.Latest()
		tb, okB := thB.Latest()
		if !okA || !okB || !slices.Equal(ta.Pix, tb.Pix) {
			t.Errorf("%s: thumbnails differ", name)
		}
	}
}
