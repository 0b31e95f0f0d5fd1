package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestObjectiveGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dt := 0.07
	z := [][]float64{make([]float64, 15), make([]float64, 11)}
	for _, zm := range z {
		for k := range zm {
			zm[k] = 0.3 * rng.NormFloat64()
		}
	}
	c := Coefficients{Gamma1: 0.4, Gamma0: 3.1, G: 0.2}
	for _, cfg := range []LossConfig{
		{Reg: VarFloor, Tau: 1, Lambda: 1, Eps: 1e-8, Offset: SharedOffset},
		{Reg: VarFloor, Tau: 1, Lambda: 2, Eps: 1e-8},
		{Reg: KL, Tau: 1, Lambda: 1, Eps: 1e-8, Offset: SharedOffset},
		{Reg: NoReg, Tau: 1, Lambda: 1, Eps: 1e-8},
		{Reg: VarFloor, Tau: 1, Lambda: 1, Eps: 1e-8, Offset: ClipOffsets},
	} {
		_, dz, dc := Objective(z, dt, c, cfg)
		const h = 1e-6
		for m := range z {
			for k := range z[m] {
				old := z[m][k]
				z[m][k] = old + h
				lp, _, _ := Objective(z, dt, c, cfg)
				z[m][k] = old - h
				lm, _, _ := Objective(z, dt, c, cfg)
				z[m][k] = old
				num := (lp - lm) / (2 * h)
				if d := math.Abs(num - dz[m][k]); d > 1e-6*math.Max(1, math.Abs(num)) {
					t.Errorf("%s: dL/dz[%d][%d] = %g, finite difference %g", cfg.Reg, m, k, dz[m][k], num)
				}
			}
		}
		for i, p := range []*float64{&c.Gamma1, &c.Gamma0, &c.G} {
			old := *p
			*p = old + h
			lp, _, _ := Objective(z, dt, c, cfg)
			*p = old - h
			lm, _, _ := Objective(z, dt, c, cfg)
			*p = old
			num := (lp - lm) / (2 * h)
			got := []float64{dc.Gamma1, dc.Gamma0, dc.G}[i]
			if cfg.Offset != SharedOffset && i == 2 {
				num = 0
			}
			if d := math.Abs(num - got); d > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("%s: dL/dγ[%d] = %g, finite difference %g", cfg.Reg, i, got, num)
			}
		}
	}
}

func TestVarianceFloorInactiveAboveTau(t *testing.T) {
	z := [][]float64{{-3, 3, -3, 3, -3, 3}}
	cfg := LossConfig{Reg: VarFloor, Tau: 1, Lambda: 1, Eps: 1e-8}
	r, g := regularizer(z[0], cfg)
	if r != 0 {
		t.Errorf("std 3 > τ=1 must cost nothing, got %g", r)
	}
	for _, v := range g {
		if v != 0 {
			t.Fatal("gradient must vanish above the floor")
		}
	}
	// Collapse is penalised by exactly τ² (minus the ε smoothing).
	r, _ = regularizer([]float64{0, 0, 0}, cfg)
	if math.Abs(r-math.Pow(1-math.Sqrt(1e-8), 2)) > 1e-12 {
		t.Errorf("collapsed latent costs %g", r)
	}
}

func TestLossConfigValidate(t *testing.T) {
	bad := []LossConfig{
		{Reg: "l2", Tau: 1, Lambda: 1, Eps: 1e-8},
		{Reg: VarFloor, Tau: 0, Lambda: 1, Eps: 1e-8},
		{Reg: VarFloor, Tau: 1, Lambda: math.NaN(), Eps: 1e-8},
		{Reg: VarFloor, Tau: 1, Lambda: 1, Eps: 0},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
