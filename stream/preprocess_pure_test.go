package stream

import (
	"errors"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"
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
	}
	for _, tc := range bad {
		err := tc.p.Validate()
		if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v.Validate() = %v, want ErrInvalidOption naming %s", tc.p, err, tc.field)
		}
	}
	for _, p := range []Preprocess{{}, {Size: 8, Binarize: true}, {Threshold: 0.99}, {ROI: ROI{W: 1, H: 1}}} {
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
