package figure

import (
	"fmt"
	"image"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Scene is the camera picture a window was cut from, with the region of
// interest the estimator saw: drawn beside the latent so that a reader sees
// what was measured.
type Scene struct {
	// W and H are the picture's size and Pix its W·H gray levels,
	// row-major (a small copy of the whole frame: stream.Thumbnail).
	W   int    `json:"w"`
	H   int    `json:"h"`
	Pix []byte `json:"-"`
	// SrcW and SrcH are the source frame's size, the coordinates of
	// Region and Active.
	SrcW int `json:"src_w"`
	SrcH int `json:"src_h"`
	// Region is the crop {x, y, w, h} in source pixels.
	Region [4]int `json:"region"`
	// Active, when set, is where an automatic search saw the oscillation.
	Active *[4]int `json:"active,omitempty"`
	// Label names the region in the legend.
	Label string `json:"label,omitempty"`
}

// valid reports whether s can be drawn.
func (s *Scene) valid() bool {
	return s != nil && s.W > 0 && s.H > 0 && len(s.Pix) == s.W*s.H && s.SrcW > 0 && s.SrcH > 0
}

// regionColor and activeColor draw the crop and the oscillating cells.
var (
	regionColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	activeColor = color.RGBA{R: 0xff, G: 0xbf, B: 0x00, A: 0xff}
)

// Plot draws the picture in source-pixel coordinates (y down, as in the
// video) with the region as a rectangle.
func (s *Scene) Plot() (*plot.Plot, error) {
	if !s.valid() {
		return nil, fmt.Errorf("figure: scene: %d×%d picture with %d pixels of a %d×%d frame", s.W, s.H, len(s.Pix), s.SrcW, s.SrcH)
	}
	label := s.Label
	if label == "" {
		label = "region"
	}
	p := plot.New()
	// The key is in the title: a legend would cover the picture.
	p.Title.Text = fmt.Sprintf("%d×%d frame\nred: %s", s.SrcW, s.SrcH, label)
	if s.Active != nil {
		p.Title.Text += "\nyellow: oscillating cells"
	}
	p.X.Label.Text = "x (px)"
	p.Y.Label.Text = "y (px)"
	// plot's y runs up; the picture's down: y is drawn as SrcH − y and the
	// tick labels say the video's y.
	img := &image.Gray{Pix: s.Pix, Stride: s.W, Rect: image.Rect(0, 0, s.W, s.H)}
	p.Add(plotter.NewImage(img, 0, 0, float64(s.SrcW), float64(s.SrcH)))
	p.X.Min, p.X.Max = 0, float64(s.SrcW)
	p.Y.Min, p.Y.Max = 0, float64(s.SrcH)
	p.Y.Tick.Marker = flippedTicks{h: float64(s.SrcH)}
	add := func(r [4]int, c color.Color, width vg.Length, label string) error {
		x0, y0 := float64(r[0]), float64(s.SrcH-r[1])
		x1, y1 := float64(r[0]+r[2]), float64(s.SrcH-r[1]-r[3])
		l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
		if err != nil {
			return fmt.Errorf("figure: scene: %s: %w", label, err)
		}
		l.Color, l.Width = c, width
		p.Add(l)
		return nil
	}
	if err := add(s.Region, regionColor, vg.Points(1.5), label); err != nil {
		return nil, err
	}
	if s.Active != nil {
		if err := add(*s.Active, activeColor, vg.Points(0.8), "oscillating cells"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// flippedTicks labels a y axis drawn as h − y with the video's y.
type flippedTicks struct{ h float64 }

// Ticks implements plot.Ticker.
func (f flippedTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(f.h-max, f.h-min)
	for i := range ts {
		ts[i].Value = f.h - ts[i].Value
	}
	return ts
}
