package window

import "slices"

// Check names: the certificate's tests, machine-readable in the verdict's
// checks (a subscriber tells "too short" from "impulse" without parsing
// the reasons' prose).
const (
	// CheckEstimate: there is an estimate whose latent can be traced.
	CheckEstimate = "estimate"
	// CheckCoverage: level-set slope coverage (Sec. 4).
	CheckCoverage = "coverage"
	// CheckImpulse: no velocity jump inside the window.
	CheckImpulse = "impulse"
	// CheckEnergyGrowth: no covered level's slopes gain energy.
	CheckEnergyGrowth = "energy-growth"
	// CheckRevisit: frames at one latent level look alike.
	CheckRevisit = "revisit"
	// CheckConditioning: the design-conditioning lemma's ψ_min.
	CheckConditioning = "conditioning"
	// CheckFit: the latent is an ODE trajectory.
	CheckFit = "fit"
	// CheckStructuredResidual: the stencil's residual is noise.
	CheckStructuredResidual = "structured-residual"
	// CheckUndampedClip: one clip's damping is told from zero.
	CheckUndampedClip = "undamped-clip"
	// CheckDarkFrames: the view never went dark.
	CheckDarkFrames = "dark-frames"
	// CheckCameraMotion: the latent does not follow the camera.
	CheckCameraMotion = "camera-motion"
	// CheckRestoring: γ0 > 0.
	CheckRestoring = "restoring"
	// CheckStable: damping not negative beyond 3σ.
	CheckStable = "stable"
	// CheckPrecision: σ within the precision limits.
	CheckPrecision = "precision"
	// CheckReadoutsAgree: identified readouts give one answer (Choose).
	CheckReadoutsAgree = "readouts-agree"
	// CheckNoLag: the learned latent does not lag a followed object (Choose).
	CheckNoLag = "no-lag"
	// CheckResolved: the region moves beyond its noise floor (Resolve).
	CheckResolved = "resolved"
	// CheckBroadband: an ambient record's response is Gaussian, as
	// broadband forcing of a linear mode leaves it, not a forcing at one
	// frequency (package ambient).
	CheckBroadband = "broadband"
	// CheckSignatureFit: an ambient record's signature is one mode's free
	// response within the signature's own noise (package ambient).
	CheckSignatureFit = "signature-fit"
	// CheckSeparated: a mode read from a readout of several stands
	// apart from the others (package modes).
	CheckSeparated = "separated"
	// CheckReadoutLinear: the readout a mode was read from is a
	// small-motion one, its gain bounded over the swing (package modes).
	CheckReadoutLinear = "readout-linear"
)

// CheckNames are every check's name, in the order a verdict makes them.
func CheckNames() []string {
	return []string{CheckEstimate, CheckCoverage, CheckImpulse, CheckEnergyGrowth, CheckRevisit, CheckConditioning, CheckFit,
		CheckStructuredResidual, CheckUndampedClip, CheckDarkFrames, CheckCameraMotion, CheckRestoring, CheckStable, CheckPrecision,
		CheckReadoutsAgree, CheckNoLag, CheckResolved, CheckBroadband, CheckSignatureFit, CheckSeparated, CheckReadoutLinear}
}

// Check is one test of the certificate: its name (a Check* constant),
// whether it passed, whether it reads the estimate's σ, and why it failed.
type Check struct {
	Name       string `json:"name"`
	Passed     bool   `json:"passed"`
	NeedsSigma bool   `json:"needs_sigma"`
	Detail     string `json:"detail,omitempty"`
}

// checks collects a verdict's checks in the order they are made, and the
// notes its reasons end with.
type checks struct {
	list  []Check
	notes []string
}

// add records a check; a non-empty why means it failed.
func (c *checks) add(name string, needsSigma bool, why string) {
	c.list = append(c.list, Check{Name: name, Passed: why == "", NeedsSigma: needsSigma, Detail: why})
}

// note adds an explanation to the reasons that is no check's.
func (c *checks) note(s string) { c.notes = append(c.notes, s) }

// failed returns the failed checks.
func (c *checks) failed() []Check {
	var f []Check
	for _, k := range c.list {
		if !k.Passed {
			f = append(f, k)
		}
	}
	return f
}

// passed reports whether every check so far passed.
func (c *checks) passed() bool { return len(c.failed()) == 0 }

// sigmaFreeFailure reports whether a check of list that reads no σ
// failed, the window then being refused whatever its σ; with only, just
// those checks and the estimate's count.
func sigmaFreeFailure(list []Check, only []string) bool {
	for _, k := range list {
		asked := len(only) == 0 || k.Name == CheckEstimate || slices.Contains(only, k.Name)
		if asked && !k.Passed && !k.NeedsSigma {
			return true
		}
	}
	return false
}

// reasons are the failed checks' details, in order, without omit's, then
// the notes.
func (c *checks) reasons(omit string) []string {
	var r []string
	for _, k := range c.list {
		if !k.Passed && k.Name != omit {
			r = append(r, k.Detail)
		}
	}
	return append(r, c.notes...)
}

// when is f() when cond holds, else "".
func when(cond bool, f func() string) string {
	if !cond {
		return ""
	}
	return f()
}
