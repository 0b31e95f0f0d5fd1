package stream

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Timing describes what was learned about frame times.
type Timing struct {
	// DeclaredFPS is the rate the container declares (0 if none).
	DeclaredFPS float64
	// MedianStep is the median of consecutive presentation-time differences.
	MedianStep time.Duration
	// Irregular reports that the frames are not evenly spaced: there are
	// gaps, bursts, or the spacing drifts. Timestamp jitter around an even
	// grid does not count. Irregular frames should be handled by their
	// Frame.Time, not by index/FPS.
	Irregular bool
	// Assumed says in words what rate the caller should assume, and why.
	Assumed string
	// FPS is the rate to use downstream (0 if it cannot be known).
	FPS float64
	// Repaired counts frames whose reported time could not be used and was
	// extrapolated (see the package documentation). ReadFile sets it.
	Repaired int
	// Failed counts frames that could not be decoded: reads that returned
	// no image, plus an estimate of the frames lost when decoding stopped
	// before the container's declared duration. ReadFile sets it.
	Failed int
}

// Tolerances of AnalyzeTiming.
const (
	// declaredTol is how far (relative) the declared rate may be from the
	// timestamps' rate and still be believed.
	declaredTol = 0.05
	// jitterTol is the relative deviation of a step from the median above
	// which the steps are said to jitter.
	jitterTol = 0.10
	// spanTol is how far span/(n-1) may be from the median step for the
	// timestamps to count as merely quantised or jittered.
	spanTol = 0.02
	// gridTol is the largest distance, as a fraction of the step, that a
	// frame may sit from the even grid t0 + i·span/(n-1).
	gridTol = 0.25
	// gapFactor: a step longer than gapFactor × median is a gap.
	gapFactor = 1.5
	// burstFactor: a step shorter than burstFactor × median is a burst.
	burstFactor = 0.5
	// maxListed is how many gaps or bursts Assumed lists by position.
	maxListed = 3
)

// AnalyzeTiming decides, from the presentation times of consecutive frames,
// the container's declared rate, and an optional override, which frame rate
// the caller should assume. It is pure and never panics. A declaredFPS or
// override that is not a finite positive number counts as absent.
//
// The rules, with m the median step and T = span/(n-1):
//   - override > 0 wins. FPS = override, Irregular = false (the frame times
//     become Seq/override), and Assumed also reports what the timestamps said.
//   - Gaps (a step > 1.5·m) and bursts (a step < 0.5·m, including repeated
//     or decreasing times) make the frames Irregular. So does spacing that
//     drifts away from the even grid t0 + i·T by more than T/4. In all these
//     cases FPS = 1/m, and Assumed says where the problem is.
//   - Otherwise the frames are evenly spaced at T. Steps that jitter (more
//     than 10 % off m) or are quantised (T and m more than 2 % apart) are
//     timestamp noise, and Assumed says so. FPS is the declared rate if it
//     is within 5 % of 1/T (a 1–5 % difference is noted), else 1/T.
//   - With fewer than two frames, or a median step <= 0, the timestamps say
//     nothing, and FPS falls back to the declared rate.
func AnalyzeTiming(times []time.Duration, declaredFPS float64, override float64) Timing {
	if !validRate(declaredFPS) {
		declaredFPS = 0
	}
	if !validRate(override) {
		override = 0
	}
	t := Timing{DeclaredFPS: declaredFPS}
	a := analyzeSteps(times)
	t.MedianStep = a.median

	if override > 0 {
		t.FPS = override
		t.Assumed = fmt.Sprintf("FPS override wins: assuming %.2f fps, frame times are Seq/FPS (%s; %s)",
			override, declaredPhrase(declaredFPS), a.summary())
		return t
	}
	if a.median <= 0 {
		if declaredFPS > 0 {
			t.FPS = declaredFPS
			t.Assumed = fmt.Sprintf("%s: assuming the declared %.2f fps", a.summary(), declaredFPS)
		} else {
			t.Assumed = fmt.Sprintf("%s and the container declares no rate: frame rate unknown", a.summary())
		}
		return t
	}
	if a.irregular() {
		t.Irregular = true
		t.FPS = 1 / a.median.Seconds()
		t.Assumed = fmt.Sprintf("frames are irregular: %s; nominal rate 1/median step = %.2f fps (%s), use Frame.Time rather than index/FPS",
			a.irregularity(), t.FPS, declaredPhrase(declaredFPS))
		return t
	}

	tsFPS := 1 / a.step.Seconds()
	spacing := fmt.Sprintf("frames are evenly spaced at %s", fmtStep(a.step))
	if a.noisy() {
		what := "jitter"
		if a.distinct <= 3 {
			what = "are quantised"
		}
		spacing = fmt.Sprintf("frame timestamps %s (steps %s to %s, median %s) while staying within %s of an even grid, so frames are evenly spaced at span/(n−1) = %s",
			what, fmtStep(a.minStep), fmtStep(a.maxStep), fmtStep(a.median), fmtStep(a.maxResidual), fmtStep(a.step))
	}
	switch {
	case declaredFPS == 0:
		t.FPS = tsFPS
		t.Assumed = fmt.Sprintf("container declares no rate; %s: assuming %.2f fps", spacing, t.FPS)
	case math.Abs(declaredFPS/tsFPS-1) > declaredTol:
		t.FPS = tsFPS
		t.Assumed = fmt.Sprintf("container declares %s fps but %s: assuming %.2f fps", fmtFPS(declaredFPS), spacing, t.FPS)
	default:
		t.FPS = declaredFPS
		t.Assumed = fmt.Sprintf("container declares %s fps and %s: assuming %.2f fps", fmtFPS(declaredFPS), spacing, t.FPS)
		if d := math.Abs(declaredFPS/tsFPS - 1); d > 0.01 {
			t.Assumed += fmt.Sprintf(" (the timestamps alone give %.2f fps, %.1f %% off)", tsFPS, 100*d)
		}
	}
	return t
}

// stepAnalysis holds the statistics of a list of frame times.
type stepAnalysis struct {
	n                int
	median           time.Duration // median step
	step             time.Duration // span/(n-1)
	minStep, maxStep time.Duration
	maxDev           float64       // max |step-median|/median
	distinct         int           // number of distinct step values
	maxResidual      time.Duration // max distance from the even grid
	residualAt       time.Duration // where maxResidual occurs
	gaps, bursts     []stepEvent
}

// stepEvent is an abnormal step between two frame times.
type stepEvent struct {
	at   time.Duration // time of the frame before the step
	step time.Duration
}

func analyzeSteps(times []time.Duration) stepAnalysis {
	a := stepAnalysis{n: len(times)}
	if len(times) < 2 {
		return a
	}
	steps := make([]time.Duration, len(times)-1)
	for i := range steps {
		steps[i] = times[i+1] - times[i]
	}
	sorted := slices.Clone(steps)
	slices.Sort(sorted)
	a.minStep, a.maxStep = sorted[0], sorted[len(sorted)-1]
	a.distinct = len(slices.Compact(slices.Clone(sorted)))
	k := len(sorted)
	a.median = sorted[k/2]
	if k%2 == 0 {
		a.median = (sorted[k/2-1] + sorted[k/2]) / 2
	}
	span := times[len(times)-1] - times[0]
	a.step = span / time.Duration(len(steps))
	if a.median <= 0 {
		return a
	}
	m := float64(a.median)
	for i, s := range steps {
		a.maxDev = math.Max(a.maxDev, math.Abs(float64(s)-m)/m)
		switch {
		case float64(s) > gapFactor*m:
			a.gaps = append(a.gaps, stepEvent{times[i], s})
		case float64(s) < burstFactor*m:
			a.bursts = append(a.bursts, stepEvent{times[i], s})
		}
	}
	if a.step > 0 {
		for i, t := range times {
			grid := float64(times[0]) + float64(i)*float64(span)/float64(len(steps))
			if r := time.Duration(math.Abs(float64(t) - grid)); r > a.maxResidual {
				a.maxResidual, a.residualAt = r, t
			}
		}
	}
	return a
}

// drifts reports spacing that leaves the even grid: real rate changes.
func (a stepAnalysis) drifts() bool {
	return a.step <= 0 || float64(a.maxResidual) > gridTol*float64(a.step)
}

func (a stepAnalysis) irregular() bool {
	return len(a.gaps) > 0 || len(a.bursts) > 0 || a.drifts()
}

// noisy reports evenly spaced frames whose individual steps are not.
func (a stepAnalysis) noisy() bool {
	return a.maxDev > jitterTol || math.Abs(float64(a.step)/float64(a.median)-1) > spanTol
}

// irregularity describes why the frames are irregular, and where.
func (a stepAnalysis) irregularity() string {
	var parts []string
	if len(a.gaps) > 0 {
		parts = append(parts, fmt.Sprintf("%d gap(s) longer than %.1f× the median step %s %s",
			len(a.gaps), gapFactor, fmtStep(a.median), listEvents(a.gaps, a.median)))
	}
	if len(a.bursts) > 0 {
		parts = append(parts, fmt.Sprintf("%d step(s) shorter than %.1f× the median step %s %s",
			len(a.bursts), burstFactor, fmtStep(a.median), listEvents(a.bursts, a.median)))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("the spacing varies (steps %s to %s, median %s, mean %s) and frames drift up to %s from an even grid (at %s)",
			fmtStep(a.minStep), fmtStep(a.maxStep), fmtStep(a.median), fmtStep(a.step), fmtStep(a.maxResidual), fmtSec(a.residualAt)))
	}
	return strings.Join(parts, "; ")
}

// summary describes the timestamps in a few words, for messages that do
// not rely on them.
func (a stepAnalysis) summary() string {
	switch {
	case a.n == 0:
		return "no usable frame times"
	case a.n == 1:
		return "only one usable frame time, no steps"
	case a.median <= 0:
		return fmt.Sprintf("timestamps are unusable (median step %s over %d frames)", fmtStep(a.median), a.n)
	case a.irregular():
		return "timestamps: irregular, " + a.irregularity()
	}
	return fmt.Sprintf("timestamps: evenly spaced at %s = %.2f fps", fmtStep(a.step), 1/a.step.Seconds())
}

func listEvents(ev []stepEvent, median time.Duration) string {
	var b strings.Builder
	b.WriteString("at ")
	for i, e := range ev {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(ev)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s, %.1f steps)", fmtSec(e.at), fmtStep(e.step), float64(e.step)/float64(median))
	}
	return b.String()
}

func declaredPhrase(fps float64) string {
	if fps == 0 {
		return "container declares no rate"
	}
	return "container declares " + fmtFPS(fps) + " fps"
}

func validRate(f float64) bool { return f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// fmtFPS prints a rate with at most three decimals: 25, 29.97, 90000.
func fmtFPS(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// fmtStep prints a duration in milliseconds: "40.0 ms", "3.333 ms".
func fmtStep(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if math.Abs(ms) < 10 {
		return fmt.Sprintf("%.3f ms", ms)
	}
	return fmt.Sprintf("%.1f ms", ms)
}

// fmtSec prints a time in seconds: "0.450 s".
func fmtSec(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// Clean reports that nothing about the timing needed a decision: the
// container declares the rate the timestamps show, the frames are evenly
// spaced, and every frame decoded with a usable time.
func (t Timing) Clean() bool {
	return t.DeclaredFPS > 0 && t.FPS > 0 && !t.Irregular && t.Repaired == 0 && t.Failed == 0 &&
		math.Abs(t.FPS/t.DeclaredFPS-1) <= declaredTol
}
