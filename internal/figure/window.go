// Package figure draws the evidence behind a window's verdict — the learned
// latent, the fitted ODE solution over it, the covered interval U and the
// level crossings whose slopes made or failed the certificate — as PNG or
// SVG files for reports. `physd estimate --plot` and `make paper` use it;
// the dashboard draws the same figure in the browser from the same data.
package figure

import (
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// Window is what the figure of one window shows.
type Window struct {
	// Title heads the figure (e.g. the file or cell it is about).
	Title string `json:"title,omitempty"`
	// Dt is the sampling step in seconds; time restarts at 0 for each clip.
	Dt float64 `json:"dt"`
	// Latents are the encoder's outputs per clip; Fitted the ODE solution
	// fitted to them (nil when the estimate has no output-error fit).
	Latents [][]float64 `json:"latents"`
	Fitted  [][]float64 `json:"fitted,omitempty"`
	// Covered says whether level-set slope coverage held; Lo and Hi bound
	// the widest run of covered levels (NaN when there is none).
	Covered bool    `json:"covered"`
	Lo      float64 `json:"u_lo"`
	Hi      float64 `json:"u_hi"`
	// Levels are the levels whose crossings are shown; Crossings[i] lists
	// every passage of a trajectory through Levels[i].
	Levels    []float64           `json:"levels"`
	Crossings [][]window.Crossing `json:"crossings"`
	// Verdict and Gamma0/Gamma1 label the figure.
	Verdict string  `json:"verdict"`
	Gamma0  float64 `json:"gamma0"`
	Gamma1  float64 `json:"gamma1"`
	// Scene, when set, is drawn on the left: the camera picture with the
	// region of interest the latent was read from.
	Scene *Scene `json:"scene,omitempty"`
	// Spectrum, when set, is drawn on the right.
	Spectrum *Spectrum `json:"spectrum,omitempty"`
}

// shownLevels is how many levels get their crossings drawn: enough to see
// whether three distinct slopes meet at a level, few enough to read.
const shownLevels = 3

// FromResult collects a window's figure from its estimate and verdict,
// with its crossings at shownLevels levels (see Levels).
func FromResult(title string, r *estimator.Result, v window.Verdict) Window {
	w := Window{Title: title, Dt: r.Dt, Latents: r.Latents, Covered: v.Coverage.Holds, Lo: v.Coverage.Lo, Hi: v.Coverage.Hi,
		Verdict: string(v.Status), Gamma0: r.Gamma0, Gamma1: r.Gamma1}
	if r.Trajectory != nil {
		w.Fitted = r.Trajectory.Fitted
	}
	w.Levels = v.Coverage.ShownLevels(r.Latents, shownLevels)
	// The crossings as the certificate read them.
	tr, err := window.NewTrace(r)
	for _, u := range w.Levels {
		var c []window.Crossing
		if err == nil {
			c = tr.Crossings(u)
		}
		w.Crossings = append(w.Crossings, c)
	}
	return w
}
