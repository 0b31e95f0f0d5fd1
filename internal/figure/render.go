package figure

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrFormat is returned (wrapped) for a file name that is neither .png
// nor .svg.
var ErrFormat = errors.New("figure: unknown format (want .png or .svg)")

// Size of a saved figure: wide enough for a report column.
const (
	width  = 7 * vg.Inch
	height = 3.5 * vg.Inch
)

// clipColor tells clips apart; the fitted solution is drawn dashed in black.
func clipColor(m int) color.Color {
	colors := [...]color.RGBA{
		{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	}
	return colors[m%len(colors)]
}

// Plot draws the window: each clip's latent (solid) and fitted solution
// (dashed) against time, U as a shaded band, the shown levels as thin
// lines and their crossings as dots.
func (w Window) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = w.title()
	p.X.Label.Text = "t (s) from each clip's first frame"
	p.Y.Label.Text = "latent z"
	p.Legend.Top = true
	tEnd := 0.0
	for _, z := range w.Latents {
		tEnd = math.Max(tEnd, float64(len(z)-1)*w.Dt)
	}
	if w.Covered && w.Hi > w.Lo {
		band, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: w.Lo}, {X: tEnd, Y: w.Lo}, {X: tEnd, Y: w.Hi}, {X: 0, Y: w.Hi}})
		if err != nil {
			return nil, fmt.Errorf("figure: band: %w", err)
		}
		band.Color = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x38}
		band.LineStyle.Width = 0
		p.Add(band)
		p.Legend.Add("covered levels U", band)
	}
	for _, u := range w.Levels {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: u}, {X: tEnd, Y: u}})
		if err != nil {
			return nil, fmt.Errorf("figure: level: %w", err)
		}
		l.Color = color.Gray{Y: 0x99}
		l.Width = vg.Points(0.5)
		p.Add(l)
	}
	for m, z := range w.Latents {
		l, err := plotter.NewLine(series(z, w.Dt))
		if err != nil {
			return nil, fmt.Errorf("figure: latent of clip %d: %w", m+1, err)
		}
		l.Color = clipColor(m)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("clip %d latent", m+1), l)
		if m < len(w.Fitted) {
			f, err := plotter.NewLine(series(w.Fitted[m], w.Dt))
			if err != nil {
				return nil, fmt.Errorf("figure: fit of clip %d: %w", m+1, err)
			}
			f.Color = color.Black
			f.Width = vg.Points(0.8)
			f.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(f)
			if m == 0 {
				p.Legend.Add("fitted ODE solution", f)
			}
		}
	}
	for i, cs := range w.Crossings {
		for _, c := range cs {
			s, err := plotter.NewScatter(plotter.XYs{{X: c.Time, Y: w.Levels[i]}})
			if err != nil {
				return nil, fmt.Errorf("figure: crossing: %w", err)
			}
			s.GlyphStyle = draw.GlyphStyle{Color: clipColor(c.Clip), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
	}
	return p, nil
}

func (w Window) title() string {
	var b strings.Builder
	if w.Title != "" {
		b.WriteString(w.Title + ": ")
	}
	fmt.Fprintf(&b, "%s, γ0 = %.4g, γ1 = %.4g", w.Verdict, w.Gamma0, w.Gamma1)
	return b.String()
}

// series is z against time, skipping samples that are not finite.
func series(z []float64, dt float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(z))
	for k, v := range z {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xy = append(xy, plotter.XY{X: float64(k) * dt, Y: v})
		}
	}
	return xy
}

// Write renders the window's figure in format "png" or "svg" to out.
func (w Window) Write(out io.Writer, format string) error {
	p, err := w.Plot()
	if err != nil {
		return err
	}
	if format != "png" && format != "svg" {
		return fmt.Errorf("%q: %w", format, ErrFormat)
	}
	// Panels left to right: the scene, the latent, the spectrum.
	var left, right vg.Length
	var sp, pp *plot.Plot
	if w.Scene.valid() {
		if sp, err = w.Scene.Plot(); err != nil {
			return err
		}
		// The scene's panel: the picture's aspect ratio at the figure's
		// height (less the axes' margins), within bounds.
		left = vg.Length(float64(height-0.9*vg.Inch)*float64(w.Scene.SrcW)/float64(w.Scene.SrcH)) + 0.9*vg.Inch
		left = min(max(left, 1.6*vg.Inch), 4.5*vg.Inch)
	}
	if w.Spectrum.valid() {
		if pp, err = w.Spectrum.Plot(); err != nil {
			return err
		}
		right = 3.5 * vg.Inch
	}
	c, err := draw.NewFormattedCanvas(left+width+right, height, format)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	dc := draw.New(c)
	if sp != nil {
		sp.Draw(draw.Crop(dc, 0, -(width + right), 0, 0))
	}
	p.Draw(draw.Crop(dc, left, -right, 0, 0))
	if pp != nil {
		pp.Draw(draw.Crop(dc, left+width, 0, 0, 0))
	}
	var wt io.WriterTo = c
	if _, err := wt.WriteTo(out); err != nil {
		return fmt.Errorf("figure: write: %w", err)
	}
	return nil
}

// Save writes the window's figure to path, in the format its extension
// names (.png or .svg).
func (w Window) Save(path string) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	if err := w.Write(f, format); err != nil {
		_ = f.Close()
		return fmt.Errorf("figure %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("figure: %w", err)
	}
	return nil
}

// FormatOf is "png" or "svg" from path's extension, or an error naming it.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("%s: extension %q: %w", path, ext, ErrFormat)
	}
}
