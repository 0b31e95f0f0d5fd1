package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Spectrum is a latent's periodogram (window.DecaySpectrum) with the
// frequencies of the window's modes marked.
type Spectrum struct {
	Hz    []float64 `json:"hz"`
	Power []float64 `json:"power"`
	// Marks are the modes' natural frequencies f_n, Hz.
	Marks []float64 `json:"marks,omitempty"`
}

// valid reports a spectrum with points to draw.
func (s *Spectrum) valid() bool { return s != nil && len(s.Hz) > 1 && len(s.Hz) == len(s.Power) }

// Plot draws the spectrum: log10 of the power, relative to its peak,
// against frequency, and a dashed line at each mark.
func (s *Spectrum) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "spectrum of clip 1's latent"
	p.X.Label.Text = "f (Hz)"
	p.Y.Label.Text = "log10 power / peak"
	peak := 0.0
	for _, v := range s.Power {
		peak = math.Max(peak, v)
	}
	xy := make(plotter.XYs, 0, len(s.Hz))
	lo := 0.0
	for i, f := range s.Hz {
		if v := s.Power[i]; v > 0 && peak > 0 && !math.IsInf(v, 0) {
			y := math.Log10(v / peak)
			xy = append(xy, plotter.XY{X: f, Y: y})
			lo = math.Min(lo, y)
		}
	}
	if len(xy) < 2 {
		return p, nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, fmt.Errorf("figure: spectrum: %w", err)
	}
	l.Color = clipColor(0)
	p.Add(l)
	for _, m := range s.Marks {
		if math.IsNaN(m) || m <= 0 {
			continue
		}
		ml, err := plotter.NewLine(plotter.XYs{{X: m, Y: lo}, {X: m, Y: 0}})
		if err != nil {
			return nil, fmt.Errorf("figure: mark: %w", err)
		}
		ml.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
		ml.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(ml)
	}
	return p, nil
}
