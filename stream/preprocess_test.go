//go:build !nocv

package stream

import (
	"errors"
	"image"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// grayMat builds an 8-bit gray Mat from rows of levels.
func grayMat(t *testing.T, rows [][]uint8) gocv.Mat {
	t.Helper()
	h, w := len(rows), len(rows[0])
	m := gocv.NewMatWithSize(h, w, gocv.MatTypeCV8UC1)
	for y, row := range rows {
		for x, v := range row {
			m.SetUCharAt(y, x, v)
		}
	}
	return m
}

func TestApplyResizeAveragesBlocks(t *testing.T) {
	m := grayMat(t, [][]uint8{
		{0, 0, 255, 255},
		{0, 0, 255, 255},
		{10, 20, 100, 100},
		{30, 40, 100, 101},
	})
	defer m.Close()
	f, err := Preprocess{Size: 2}.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 25.0 / 255, 100.25 / 255}
	if f.W != 2 || f.H != 2 || len(f.Pix) != 4 {
		t.Fatalf("got %dx%d, %d pixels", f.W, f.H, len(f.Pix))
	}
	for i := range want {
		if math.Abs(f.Pix[i]-want[i]) > 1e-9 {
			t.Errorf("Pix = %v, want %v (area means, kept at sub-level precision)", f.Pix, want)
			break
		}
	}
}

func TestApplyBGRAndROI(t *testing.T) {
	// 8×6 BGR image, blue everywhere except a white 4×2 block at (2,3).
	m := gocv.NewMatWithSizeFromScalar(gocv.NewScalar(255, 0, 0, 0), 6, 8, gocv.MatTypeCV8UC3)
	defer m.Close()
	white := m.Region(image.Rect(2, 3, 6, 5))
	white.SetTo(gocv.NewScalar(255, 255, 255, 0))
	white.Close()

	f, err := Preprocess{}.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	if f.W != 8 || f.H != 6 {
		t.Fatalf("size %dx%d", f.W, f.H)
	}
	if got := f.Pix[0]; math.Abs(got-29.0/255) > 1.5/255 { // 0.114·255 ≈ 29
		t.Errorf("blue -> gray %v, want about 29/255", got)
	}
	f, err = Preprocess{ROI: ROI{X: 2, Y: 3, W: 4, H: 2}}.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	if f.W != 4 || f.H != 2 {
		t.Fatalf("ROI size %dx%d", f.W, f.H)
	}
	for _, v := range f.Pix {
		if v != 1 {
			t.Fatalf("ROI over the white block: %v", f.Pix)
		}
	}
	if _, err := (Preprocess{ROI: ROI{X: 6, Y: 0, W: 4, H: 2}}).Apply(m); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("ROI outside: %v", err)
	}
}

func TestApplyBinarize(t *testing.T) {
	m := grayMat(t, [][]uint8{
		{10, 12, 200, 210},
		{11, 13, 205, 220},
		{9, 100, 150, 230},
	})
	defer m.Close()
	otsuF, err := Preprocess{Binarize: true}.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := Preprocess{Binarize: true, Threshold: 0.5}.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}
	for i := range want {
		if otsuF.Pix[i] != want[i] || fixed.Pix[i] != want[i] {
			t.Fatalf("Otsu %v, fixed %v, want %v", otsuF.Pix, fixed.Pix, want)
		}
	}
	// A uniform image has no Otsu threshold: 0.5 is used.
	if th := otsu([]float64{0.7, 0.7, 0.7}); th != 0.5 {
		t.Errorf("otsu(uniform) = %v", th)
	}
}

func TestApplyBadInput(t *testing.T) {
	empty := gocv.NewMat()
	defer empty.Close()
	if _, err := (Preprocess{}).Apply(empty); err == nil {
		t.Error("empty Mat: no error")
	}
	f32 := gocv.NewMatWithSize(4, 4, gocv.MatTypeCV32F)
	defer f32.Close()
	if _, err := (Preprocess{}).Apply(f32); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("float Mat: %v", err)
	}
	if _, err := (Preprocess{}).ApplyGray(nil); err == nil {
		t.Error("nil image: no error")
	}
	if _, err := (Preprocess{}).ApplyGray(&image.Gray{}); err == nil {
		t.Error("empty image: no error")
	}
	short := &image.Gray{Pix: make([]uint8, 5), Stride: 4, Rect: image.Rect(0, 0, 4, 4)}
	if _, err := (Preprocess{}).ApplyGray(short); err == nil {
		t.Error("short Pix: no error")
	}
	if _, err := (Preprocess{Size: -2}).ApplyGray(image.NewGray(image.Rect(0, 0, 2, 2))); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("Size -2: %v", err)
	}
}
