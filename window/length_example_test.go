package window_test

import (
	"fmt"
	"math"

	"github.com/physd/physd/window"
)

// How long one clip of a 1 Hz oscillator must be for its damping to be
// certified, by damping ratio and slope noise (one slope estimate's σ over
// the peak slope; the dev set's clips measure 0.5–3 %).
func ExampleWindowFor() {
	fmt.Println("ζ        noise 0.5 %   1 %      2 %      4 %")
	for _, zeta := range []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05} {
		fmt.Printf("%-8g", zeta)
		for _, rel := range []float64{0.005, 0.01, 0.02, 0.04} {
			fmt.Printf(" %7.1f s", window.WindowFor(zeta, 2*math.Pi, rel, 200))
		}
		fmt.Println()
	}
	// Output:
	// ζ        noise 0.5 %   1 %      2 %      4 %
	// 0.0005       8.0 s    13.0 s    21.2 s    34.6 s
	// 0.001        4.8 s     8.0 s    13.2 s    21.9 s
	// 0.002        3.0 s     4.9 s     8.1 s    13.8 s
	// 0.005        3.0 s     3.0 s     4.1 s     7.2 s
	// 0.01         3.0 s     3.0 s     3.0 s     4.4 s
	// 0.02         3.0 s     3.0 s     3.0 s     3.0 s
	// 0.05         3.0 s     3.0 s     3.0 s     3.0 s
}
