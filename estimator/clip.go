package estimator

import (
	"fmt"
	"math"
)

// Clip is one trajectory: frames sampled every Dt seconds.
type Clip struct {
	W, H   int
	Frames [][]float64 // row-major gray in [0, 1], len W·H each
	Dt     float64     // sampling step, seconds
}

// MinFrames is the fewest frames a clip may have: the stencil needs three,
// and the fit of three coefficients a few more.
const MinFrames = 8

func validateClips(clips []Clip) error {
	if len(clips) == 0 {
		return fmt.Errorf("no clips")
	}
	w, h, dt := clips[0].W, clips[0].H, clips[0].Dt
	for i, c := range clips {
		switch {
		case c.W <= 0 || c.H <= 0:
			return fmt.Errorf("clip %d: frame size %d×%d is not positive", i, c.W, c.H)
		case c.W != w || c.H != h:
			return fmt.Errorf("clip %d: frame size %d×%d differs from clip 0's %d×%d", i, c.W, c.H, w, h)
		case !(c.Dt > 0) || math.IsInf(c.Dt, 0):
			return fmt.Errorf("clip %d: time step %g s is not positive and finite", i, c.Dt)
		case math.Abs(c.Dt-dt) > 1e-9*dt:
			return fmt.Errorf("clip %d: time step %g s differs from clip 0's %g s", i, c.Dt, dt)
		case len(c.Frames) < MinFrames:
			return fmt.Errorf("clip %d: %d frames, need at least %d", i, len(c.Frames), MinFrames)
		}
		for k, f := range c.Frames {
			if len(f) != w*h {
				return fmt.Errorf("clip %d frame %d: %d pixels, want %d×%d", i, k, len(f), w, h)
			}
			for _, v := range f {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("clip %d frame %d: pixel is %g", i, k, v)
				}
			}
		}
	}
	return nil
}
