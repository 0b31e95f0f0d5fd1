package window

import (
	"math"
	"slices"
	"testing"
)

// The levels shown are the centres of n bins of U when coverage found
// one, else the quartiles of the finite samples.
func TestShownLevels(t *testing.T) {
	got := Coverage{Lo: 0, Hi: 1}.ShownLevels(nil, 4)
	if !slices.Equal(got, []float64{0.125, 0.375, 0.625, 0.875}) {
		t.Errorf("bins of U: %v", got)
	}
	z := [][]float64{{4, 1, math.NaN()}, {3, 2, math.Inf(1), 0}}
	got = Coverage{Lo: math.NaN(), Hi: math.NaN()}.ShownLevels(z, 4)
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("quartiles of 0..4: %v", got)
	}
	if got := (Coverage{}).ShownLevels([][]float64{{math.NaN()}}, 3); got != nil {
		t.Errorf("no finite sample: %v", got)
	}
}
