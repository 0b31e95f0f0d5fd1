package motion

import "math"

// keys is the cubic convolution kernel of Keys (a = −1/2, Catmull–Rom):
// it interpolates, reproduces quadratics, and blurs a sub-pixel shift less
// than the bilinear kernel.
func keys(t float64) float64 {
	t = math.Abs(t)
	switch {
	case t < 1:
		return (1.5*t-2.5)*t*t + 1
	case t < 2:
		return ((-0.5*t+2.5)*t-4)*t + 2
	}
	return 0
}

// keysWeights returns the four weights of the taps at ⌊x⌋−1 … ⌊x⌋+2 for a
// sample at x, and ⌊x⌋.
func keysWeights(x float64) (w [4]float64, i0 int) {
	f := math.Floor(x)
	t := x - f
	w = [4]float64{keys(t + 1), keys(t), keys(1 - t), keys(2 - t)}
	return w, int(f)
}

// Undo returns the w×h frame f moved back by d: out(x, y) = f(x + d.X,
// y + d.Y), cubic interpolation, the border repeated where the shift
// exposes it. A frame that shows a scene moved by d comes back to where
// the scene was. Values are clamped to [0, 1] as frames' are.
func Undo(f []float64, w, h int, d Shift) []float64 {
	out := moveBack(f, w, h, d)
	for i, v := range out {
		out[i] = min(max(v, 0), 1)
	}
	return out
}

// moveBack is Undo without the clamp, for values in any range.
func moveBack(f []float64, w, h int, d Shift) []float64 {
	out := make([]float64, w*h)
	wx, ix := keysWeights(d.X)
	wy, iy := keysWeights(d.Y)
	rows := make([]float64, w*h)
	for y := range h {
		row := f[y*w : (y+1)*w]
		for x := range w {
			var r float64
			for i := range 4 {
				r += wx[i] * row[min(max(x+ix-1+i, 0), w-1)]
			}
			rows[y*w+x] = r
		}
	}
	for y := range h {
		for x := range w {
			var s float64
			for j := range 4 {
				s += wy[j] * rows[min(max(y+iy-1+j, 0), h-1)*w+x]
			}
			out[y*w+x] = s
		}
	}
	return out
}
