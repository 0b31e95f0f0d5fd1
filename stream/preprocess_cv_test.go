//go:build !nocv

package stream

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"gocv.io/x/gocv"
)

// TestApplyGrayMatchesApply compares the pure-Go ApplyGray with OpenCV's
// Apply on random images: shrinking by integer and fractional factors,
// growing, growing along one axis only, with and without ROI, binarised.
func TestApplyGrayMatchesApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{64, 64}, {64, 48}, {100, 75}, {37, 53}, {16, 16}, {10, 7}, {5, 90}, {640, 480}, {3, 3}, {1, 1}}
	outs := []int{0, 1, 7, 16, 32, 33, 64, 100}
	worst, flips, binTotal := 0.0, 0, 0
	for _, sz := range sizes {
		w, h := sz[0], sz[1]
		img := image.NewGray(image.Rect(0, 0, w, h))
		smooth := rng.IntN(2) == 0
		for i := range img.Pix {
			if smooth { // a gradient with noise, like a camera frame
				x, y := i%w, i/w
				img.Pix[i] = uint8(min(255, max(0, 128+100*math.Sin(float64(x)/7)*math.Cos(float64(y)/5)+rng.NormFloat64()*10)))
			} else {
				img.Pix[i] = uint8(rng.IntN(256))
			}
		}
		m, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, img.Pix)
		if err != nil {
			t.Fatal(err)
		}
		rois := []ROI{{}}
		if w > 4 && h > 4 {
			rois = append(rois, ROI{X: 1, Y: 2, W: w - 3, H: h - 4}, ROI{X: w / 3, Y: h / 4, W: w / 2, H: h / 2})
		}
		for _, roi := range rois {
			for _, size := range outs {
				for _, bin := range []bool{false, true} {
					p := Preprocess{ROI: roi, Size: size, Binarize: bin}
					want, err := p.Apply(m)
					if err != nil {
						t.Fatal(err)
					}
					got, err := p.ApplyGray(img)
					if err != nil {
						t.Fatal(err)
					}
					if got.W != want.W || got.H != want.H || len(got.Pix) != len(want.Pix) {
						t.Fatalf("%dx%d %+v: ApplyGray %dx%d, Apply %dx%d", w, h, p, got.W, got.H, want.W, want.H)
					}
					for i := range got.Pix {
						d := math.Abs(got.Pix[i] - want.Pix[i])
						if bin {
							binTotal++
							if d != 0 {
								flips++
							}
							continue
						}
						worst = math.Max(worst, d)
						if d > 1.0/255+1e-9 {
							t.Fatalf("%dx%d %+v: pixel %d: ApplyGray %v, Apply %v", w, h, p, i, got.Pix[i], want.Pix[i])
						}
					}
				}
			}
		}
		m.Close()
	}
	t.Logf("largest difference %.3g gray levels; %d of %d binarised pixels differ", worst*255, flips, binTotal)
	if worst*255 > 1e-4 { // OpenCV's float32 weights summed in another order
		t.Errorf("largest difference %.3g gray levels, want float rounding only", worst*255)
	}
	if flips > 0 {
		t.Errorf("%d binarised pixels differ", flips)
	}
}

// With Gray the frame is the whole picture in 8-bit gray, through OpenCV
// and in pure Go alike, and a zone cut from it (ApplyGray with the zone's
// ROI) is the frame a camera with that ROI would have read: one decode,
// any number of zones.
func TestGrayFrameCutsZones(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const w, h = 96, 64
	bgr := gocv.NewMatWithSize(h, w, gocv.MatTypeCV8UC3)
	defer bgr.Close()
	for y := range h {
		for x := range w {
			for c := range 3 {
				bgr.SetUCharAt(y, x*3+c, uint8(rng.IntN(256)))
			}
		}
	}
	whole, err := Preprocess{Gray: true}.Apply(bgr)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Gray == nil || whole.Pix != nil || whole.W != w || whole.H != h {
		t.Fatalf("gray frame: %d×%d, gray %v, pix %d", whole.W, whole.H, whole.Gray != nil, len(whole.Pix))
	}
	again, err := Preprocess{Gray: true}.ApplyGray(whole.Gray)
	if err != nil || again.Gray == whole.Gray || string(again.Gray.Pix) != string(whole.Gray.Pix) {
		t.Fatalf("pure-Go gray frame: copy %v, same pixels %v, %v", again.Gray != whole.Gray, again.Gray != nil && string(again.Gray.Pix) == string(whole.Gray.Pix), err)
	}
	for _, zone := range []Preprocess{{ROI: ROI{X: 5, Y: 7, W: 40, H: 30}, Size: 16}, {ROI: ROI{X: 50, Y: 0, W: 46, H: 64}, Size: 32}} {
		direct, err := zone.Apply(bgr)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := zone.ApplyGray(whole.Gray)
		if err != nil {
			t.Fatal(err)
		}
		if cut.W != direct.W || cut.H != direct.H {
			t.Fatalf("zone %v: %d×%d cut, %d×%d direct", zone.ROI, cut.W, cut.H, direct.W, direct.H)
		}
		for i := range cut.Pix {
			if d := math.Abs(cut.Pix[i] - direct.Pix[i]); d > 1e-4 {
				t.Fatalf("zone %v pixel %d: cut %.6f, direct %.6f", zone.ROI, i, cut.Pix[i], direct.Pix[i])
			}
		}
	}
	if err := (Preprocess{Gray: true, Size: 64}).Validate(); err == nil {
		t.Error("Gray with Size accepted")
	}
}
