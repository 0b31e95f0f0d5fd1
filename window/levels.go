package window

import (
	"math"
	"slices"
)

// ShownLevels picks n levels whose crossings show why a window was or was
// not certified: centred in n equal bins of U when there is one, else the
// quartiles of the pooled latent samples z, where a failed certificate is
// easiest to read. The figures (--plot) and the dashboard both draw these.
func (c Coverage) ShownLevels(z [][]float64, n int) []float64 {
	if lo, hi := c.Lo, c.Hi; isFinite(lo) && isFinite(hi) && hi > lo {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (float64(i)+0.5)/float64(n)*(hi-lo)
		}
		return out
	}
	var all []float64
	for _, zc := range z {
		for _, v := range zc {
			if isFinite(v) {
				all = append(all, v)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.Sort(all)
	return []float64{all[len(all)/4], all[len(all)/2], all[3*len(all)/4]}
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
