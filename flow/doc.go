// Package flow reads small displacements of a region straight from its
// intensity gradients: for motion of a fraction of a pixel to a pixel or
// two the image is linear in the displacement d,
//
//	I(x, t) ≈ I₀(x) − d(t)·∇I₀(x),
//
// so a least-squares d per frame over the pixels with strong gradient is
// the right model there (the simplified optical flow of video vibration
// measurement, as in pyidi). The displacement, projected on its principal
// direction, is a candidate readout beside the learned encoder's and the
// tracked object's, weighed by the same certificate; its amplitude and
// noise floor, in the source's pixels, say how far the structure moves and
// how little the video can resolve.
package flow
