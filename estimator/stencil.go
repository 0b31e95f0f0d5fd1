package estimator

// Stencil returns the centred finite differences of z sampled every dt:
//
//	z'_k  = (z_{k+1} − z_{k−1}) / (2 dt)
//	z''_k = (z_{k+1} − 2 z_k + z_{k−1}) / dt²
//
// for the interior indices k = 1 … T−1 (len(z) = T+1); index i of the
// results is k = i+1. It returns nil slices when len(z) < 3.
func Stencil(z []float64, dt float64) (d1, d2 []float64) {
	if len(z) < 3 {
		return nil, nil
	}
	n := len(z) - 2
	d1 = make([]float64, n)
	d2 = make([]float64, n)
	h1 := 1 / (2 * dt)
	h2 := 1 / (dt * dt)
	for i := range n {
		zm, z0, zp := z[i], z[i+1], z[i+2]
		d1[i] = (zp - zm) * h1
		d2[i] = (zp - 2*z0 + zm) * h2
	}
	return d1, d2
}

// stencilWeights returns the coefficients (c₋, c₀, c₊) with which the
// residual r_k = z”_k + γ1 z'_k + γ0 z_k + g reads
// r_k = c₋ z_{k−1} + c₀ z_k + c₊ z_{k+1} + g.
func stencilWeights(gamma1, gamma0, dt float64) (cm, c0, cp float64) {
	h2 := 1 / (dt * dt)
	h1 := gamma1 / (2 * dt)
	return h2 - h1, gamma0 - 2*h2, h2 + h1
}
