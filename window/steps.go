package window

import (
	"slices"
	"time"
)

// defaultMaxGap is the Slicer's gap rule when SlicerOptions.MaxGap is 0,
// and the Binner's: a step longer than 1.5 × the nominal step is a gap.
const defaultMaxGap = 1.5

// recentSteps keeps a stream's last 31 steps between frames; their
// median is its nominal step (the Slicer's and the Binner's).
type recentSteps struct{ d []time.Duration }

// add records a step.
func (r *recentSteps) add(step time.Duration) {
	r.d = append(r.d, step)
	if len(r.d) > 31 {
		r.d = r.d[1:]
	}
}

// median is the nominal step (0: no step yet).
func (r *recentSteps) median() time.Duration {
	if len(r.d) == 0 {
		return 0
	}
	c := slices.Clone(r.d)
	slices.Sort(c)
	return c[len(c)/2]
}
