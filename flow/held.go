package flow

import "github.com/physd/physd/internal/order"

// heldPixels is the share of a frame's pixels, those that change most over
// the window, on which a frame is tested for repeating its predecessor.
const heldPixels = 0.05

// heldAll is the share of the tested pixels that must repeat exactly for
// the frame to count as held.
const heldAll = 0.9

// HeldShare is the share of frames after the first in which the region's
// moving pixels repeat the previous frame's exactly: frames in which the
// stream's codec held the moving object still.
//
// Under any sensor noise two consecutive pictures never agree to the last
// bit over the pixels an object moves through; a predictive codec
// (H.264, H.265, VP8) makes them agree when it codes a block as skipped —
// the previous picture copied, its motion below what the quantiser keeps.
// A sub-pixel swing through a lossy stream is then recorded until it
// decays below the codec's threshold and held still after it (1 px at
// CRF 30 from about 0.2 px on); the held stretch carries no measurement
// of the motion, and the readouts read its stair-steps as motion or as
// quiet. The pixels tested are the heldPixels share with the largest
// variance over the window (the object's edges); a frame counts as held
// when heldAll of them repeat exactly.
func HeldShare(frames [][]float64) float64 {
	n := len(frames)
	if n < 2 || len(frames[0]) == 0 {
		return 0
	}
	np := len(frames[0])
	// Σ_t (x_t − x̄)² per pixel, by Welford's update.
	mean, m2 := make([]float64, np), make([]float64, np)
	for t, f := range frames {
		k := float64(t + 1)
		for i, v := range f {
			d := v - mean[i]
			mean[i] += d / k
			m2[i] += d * (v - mean[i])
		}
	}
	k := max(1, int(heldPixels*float64(np)))
	cut := order.Select(append([]float64(nil), m2...), np-k) // the k-th largest
	var moving []int
	for i, v := range m2 {
		if v >= cut && v > 0 {
			moving = append(moving, i)
		}
	}
	if len(moving) == 0 {
		return 0
	}
	held := 0
	for t := 1; t < n; t++ {
		same := 0
		for _, i := range moving {
			if frames[t][i] == frames[t-1][i] {
				same++
			}
		}
		if float64(same) >= heldAll*float64(len(moving)) {
			held++
		}
	}
	return float64(held) / float64(n-1)
}
