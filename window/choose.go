package window

import (
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// Alternative is a candidate readout that was certified or refused
// alongside the one reported, for the diagnostics.
type Alternative struct {
	Readout            string   `json:"readout"`
	Gamma0             float64  `json:"gamma0"`
	Gamma1             float64  `json:"gamma1"`
	Sigma0             float64  `json:"gamma0_sigma"`
	Sigma1             float64  `json:"gamma1_sigma"`
	Verdict            Status   `json:"verdict"`
	TrajectoryResidual float64  `json:"trajectory_residual"`
	Reasons            []string `json:"reasons,omitempty"`
}

// Choose certifies every candidate readout of one window (Certify)
// and returns the index of the one to report with its verdict; the others
// are listed in Verdict.Alternatives. cands[0] is the method's own (the
// learned encoder's) and is reported when no candidate is certified.
//
// Among certified candidates the one whose latent is closest to its
// fitted ODE solution (the smallest trajectory residual) is reported —
// output error, the criterion the estimate itself is read from; with
// none certified, the identified one (Verdict.Identified) closest to its
// solution, refused for precision. But two identified candidates, precise
// or not, that disagree beyond their uncertainty plus a small tolerance,
//
//	|Δγ0| > 2√(σ0a² + σ0b²) + 0.01·γ0   or   |Δγ1| > 2√(σ1a² + σ1b²) + 0.01·√γ0,
//
// cannot both describe the one oscillator a certificate speaks for: the
// scene holds another motion that also fits an ODE, or one readout bends
// the state. The window is then refused rather than one of them
// guessed: a wrong answer certified is worse than none.
//
// The learned latent, reported, is also refused when it swings with an
// object that was followed (certified or not) at the object's frequency
// but out of phase with it (lagging): it then mixes that object's state
// with another motion. A followed object's position is a function of its
// own state by construction, so only the learned latent is held to this.
func Choose(cands []*estimator.Result, th Thresholds, cam *motion.Track) (int, Verdict) {
	if len(cands) == 0 {
		return 0, Certify(nil, th, cam)
	}
	vs := make([]Verdict, len(cands))
	for i, r := range cands {
		// The readouts fitted from latents alone know no key frames;
		// they are the window's, which the encoder's fit holds.
		vs[i] = Certify(withKeys(r, cands[0]), th, cam)
	}
	// The best certified candidate; failing that, the best identified
	// one (unique but imprecise), so the verdict says why it is refused;
	// failing that, the method's own.
	better := func(i, j int) bool {
		switch {
		case vs[i].Certified != vs[j].Certified:
			return vs[i].Certified
		case vs[i].Identified != vs[j].Identified:
			return vs[i].Identified
		}
		return vs[i].Identified && vs[i].TrajectoryResidual < vs[j].TrajectoryResidual
	}
	pick := 0
	for i := 1; i < len(cands); i++ {
		if better(i, pick) {
			pick = i
		}
	}
	v := vs[pick]
	// Every identified candidate claims the unique answer, precise or not.
	for i := range cands {
		if i == pick || !v.Identified || !vs[i].Identified {
			continue
		}
		if d := disagreement(cands[pick], cands[i]); d != "" {
			v.refuse(CheckReadoutsAgree, true, fmt.Sprintf("two readouts certify different answers: %s gives γ0 %.4g, γ1 %.3g and %s gives γ0 %.4g, γ1 %.3g (%s); the scene holds another motion that fits an ODE, or a readout bends the state",
				name(cands[pick]), cands[pick].Gamma0, cands[pick].Gamma1, name(cands[i]), cands[i].Gamma0, cands[i].Gamma1, d))
		}
	}
	if v.Identified && name(cands[pick]) == estimator.ReadoutEncoder {
		for i, r := range cands {
			if i == pick || name(r) == estimator.ReadoutEncoder {
				continue
			}
			if d := lagging(cands[pick], r); d != "" {
				v.refuse(CheckNoLag, false, d)
				break
			}
		}
	}
	for i, r := range cands {
		if i == pick {
			continue
		}
		v.Alternatives = append(v.Alternatives, Alternative{Readout: name(r), Gamma0: r.Gamma0, Gamma1: r.Gamma1,
			Sigma0: r.Sigma0, Sigma1: r.Sigma1, Verdict: vs[i].Status, TrajectoryResidual: vs[i].TrajectoryResidual, Reasons: vs[i].Reasons})
	}
	return pick, v
}

func name(r *estimator.Result) string {
	if r.Readout == "" {
		return estimator.ReadoutEncoder
	}
	return r.Readout
}

// disagreement says how a and b differ beyond Choose's tolerance, or "".
func disagreement(a, b *estimator.Result) string {
	g0 := math.Max(a.Gamma0, b.Gamma0)
	tol0 := 2*math.Hypot(a.Sigma0, b.Sigma0) + 0.01*g0
	tol1 := 2*math.Hypot(a.Sigma1, b.Sigma1) + 0.01*math.Sqrt(math.Max(0, g0))
	switch d0, d1 := math.Abs(a.Gamma0-b.Gamma0), math.Abs(a.Gamma1-b.Gamma1); {
	case d0 > tol0:
		return fmt.Sprintf("|Δγ0| %.3g > %.3g", d0, tol0)
	case d1 > tol1:
		return fmt.Sprintf("|Δγ1| %.3g > %.3g", d1, tol1)
	}
	return ""
}

// refuse fails v on a check Choose makes across readouts: the answer is
// no longer unique.
func (v *Verdict) refuse(check string, needsSigma bool, why string) {
	v.Status, v.Certified, v.Identified = NotCertified, false, false
	v.Checks = append(v.Checks, Check{Name: check, NeedsSigma: needsSigma, Detail: why})
	v.Reasons = append(v.Reasons, why)
}

// Hold records a check made outside Certify — on what the window's
// estimate came from rather than on its latent (an ambient record's
// excitation, say) — and refuses v when it failed (why non-empty). A
// refused verdict keeps its status and gains the reason.
func (v *Verdict) Hold(check string, needsSigma bool, why string) {
	switch {
	case why == "":
		v.Checks = append(v.Checks, Check{Name: check, Passed: true, NeedsSigma: needsSigma})
	case v.Certified:
		v.refuse(check, needsSigma, why)
	default:
		v.Checks = append(v.Checks, Check{Name: check, NeedsSigma: needsSigma, Detail: why})
		v.Reasons = append(v.Reasons, why)
	}
}

// MinResolved is how many times its noise floor a region's motion must
// be for a window to speak of it. It was first only the fit check's
// refusal in the units the user reads (a sinusoid of amplitude A under
// white noise σ is σ/√(A²/2 + σ²) of its size from its solution, and the
// check's 0.1 needs A ≥ 14σ). Since the fit check judges a measured
// readout's residual beyond its noise (misfit), it is a limit of its
// own: a codec's amplitude-dependent gain biases the damping more the
// fainter the motion (a 0.3 px decay at CRF 18 read at 4.6× its floor
// gave γ1 30 % high, its σ blind to it), and below 10× the sweeps have
// too few windows to say where that bias stays within the bar.
const MinResolved = 10

// HeldNote is the share of frames a codec held still (flow.HeldShare)
// from which a window below its floor names the codec as the cause. A
// sub-pixel decay through x264 at CRF 30 is held in 35–55 % of a 20 s
// clip's frames (everything after about 0.2 px); at CRF 18 and without
// compression, in none.
const HeldNote = 0.25

// Resolve holds v to the region's motion, amplitudePx, against the noise
// floor of its readout, floorPx (both in source pixels): a certified
// verdict whose motion is less than MinResolved times the floor is
// refused, and a refused one says so too, both naming the amplitude and
// the floor. A refused verdict keeps its status (an undamped-looking
// window stays one): the resolution is the reason it is given in units
// the user reads, not another verdict. The check is recorded either way.
//
// held is the share of the window's frames in which the stream's codec
// held the moving pixels still (flow.HeldShare); from HeldNote on, a
// refused verdict says so, and what would resolve smaller motion — below
// the floor as the refusal's cause, above it as a note: a decay released
// above the floor that the codec held once it fell below its quantiser is
// read distorted there (docs/structures.md), and that is why a window the
// motion resolves can still say nothing.
func (v *Verdict) Resolve(amplitudePx, floorPx, held float64) {
	codec := func() string {
		return fmt.Sprintf("the stream's codec held the moving pixels still in %.0f%% of the frames, dropping motion below its quantiser: a higher bitrate (lower CRF or QP) resolves smaller motion", 100*held)
	}
	if amplitudePx >= MinResolved*floorPx {
		c := Check{Name: CheckResolved, Passed: true}
		if !v.Certified && held >= HeldNote {
			c.Detail = codec()
			v.Reasons = append(v.Reasons, c.Detail)
		}
		v.Checks = append(v.Checks, c)
		return
	}
	why := fmt.Sprintf("the region moves %.3g px (amplitude) against a noise floor of %.2g px rms: below what this video resolves (a window needs at least %d× the floor)",
		amplitudePx, floorPx, MinResolved)
	if held >= HeldNote {
		why += "; " + codec()
	}
	if v.Certified {
		v.refuse(CheckResolved, false, why)
		return
	}
	v.Checks = append(v.Checks, Check{Name: CheckResolved, Detail: why})
	v.Reasons = append(v.Reasons, why)
}
