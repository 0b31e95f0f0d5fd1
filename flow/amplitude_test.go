package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SpanAmplitude tells a free decay by the swing it was released at, where
// the whole window's rms dilutes it with the noise after the decay; a
// steady sinusoid's is its amplitude either way, and noise alone has none.
func TestSpanAmplitude(t *testing.T) {
	const n, dt, f, a, noise = 600, 1.0 / 30, 2.5, 0.3, 0.01
	rng := rand.New(rand.NewPCG(1, 2))
	reading := func(zeta float64) *Reading {
		w := 2 * math.Pi * f
		z := make([]float64, n)
		for i := range z {
			t := float64(i) * dt
			z[i] = a*math.Exp(-zeta*w*t)*math.Cos(w*t) + noise*rng.NormFloat64()
		}
		center(z)
		return &Reading{Z: z, Noise: noise}
	}
	decay := reading(0.02)
	from, to := decay.Span()
	t.Logf("decay: span %d–%d of %d, amplitude %.3f over the window, %.3f over the span's loudest stretch", from, to, n, decay.Amplitude(), decay.SpanAmplitude())
	if to >= n/2 {
		t.Errorf("the decay's span ends at frame %d: it meets the floor near frame %d", to, int(math.Log(a/(4*noise))/(0.02*2*math.Pi*f)/dt))
	}
	if got := decay.SpanAmplitude(); got < 0.8*a || got > 1.05*a {
		t.Errorf("decay released at %g px: SpanAmplitude %.3f, want within −20 … +5 %%", a, got)
	}
	if decay.Amplitude() > 0.5*a {
		t.Errorf("decay: the window's Amplitude %.3f, want it diluted by the tail (< %.2g)", decay.Amplitude(), 0.5*a)
	}
	steady := reading(0)
	if got, all := steady.SpanAmplitude(), steady.Amplitude(); math.Abs(got-a) > 0.05*a || math.Abs(all-a) > 0.05*a {
		t.Errorf("steady sinusoid of %g px: SpanAmplitude %.3f, Amplitude %.3f, want both within 5 %%", a, got, all)
	}
	z := make([]float64, n)
	for i := range z {
		z[i] = noise * rng.NormFloat64()
	}
	center(z)
	still := &Reading{Z: z, Noise: noise}
	if got := still.SpanAmplitude(); got > 4*noise {
		t.Errorf("noise alone of %g px rms: SpanAmplitude %.3f", noise, got)
	}
	t.Logf("noise alone: SpanAmplitude %.4f px against a noise of %g", still.SpanAmplitude(), noise)
}
