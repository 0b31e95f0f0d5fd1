package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// cellNamed is the sweep's cell whose name contains name.
func cellNamed(t *testing.T, name string) cell {
	t.Helper()
	cs := selected(name)
	if len(cs) != 1 {
		t.Fatalf("%d cells named %q", len(cs), name)
	}
	return cs[0]
}

// est is an estimate of f_n and ζ with γ0 = (2πf)²; off scales γ0.
func est(certified bool, fn, zeta, g0off float64) estimate {
	g0 := math.Pow(2*math.Pi*fn, 2)
	e := estimate{Gamma0: g0 * (1 + g0off), FreqN: fn * math.Sqrt(1+g0off), SigmaF: 0.002, Zeta: zeta, SigmaZ: 0.003,
		Certified: certified, Verdict: map[bool]string{true: "certified", false: "refused"}[certified]}
	if !certified {
		e.Reasons = []string{"σ(ζ) is 31 % of ζ, above the 20 % limit: a longer record would resolve it"}
	}
	return e
}

// The cells: seven with targets and two held out, 64×64 but for
// one 160×120, 10 min but for one 30 min, and the truth only where there
// is one mode.
func TestCells(t *testing.T) {
	cs := cells()
	if len(cs) != 9 {
		t.Fatalf("%d cells", len(cs))
	}
	var none, held, long, big int
	for _, c := range cs {
		s := c.structure(7)
		if s.FPS != 30 || s.Noise != 0.01 || s.Seed != 7 || s.Excitation != "ambient" {
			t.Errorf("%s: %+v", c.name, s)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if _, _, ok := c.truth(); ok != (len(c.modes) == 1) {
			t.Errorf("%s: truth %v with %d modes", c.name, ok, len(c.modes))
		}
		switch c.target {
		case targetNone:
			none++
		case targetHeldOut:
			held++
		}
		if c.minutes == 30 {
			long++
		}
		if s.W == 160 && s.H == 120 {
			big++
		} else if s.W != 64 || s.H != 64 {
			t.Errorf("%s: %d×%d", c.name, s.W, s.H)
		}
	}
	if none != 3 || held != 2 || long != 1 || big != 1 {
		t.Errorf("%d no-certificate cells, %d held out, %d of 30 min, %d at 160×120", none, held, long, big)
	}
	if len(selected("8-")) != 2 || len(selected("nothing")) != 0 || len(selected("")) != 9 {
		t.Error("-only does not select by substring")
	}
}

// The bar is 1 % in γ0 and 30 % in ζ; a certificate outside it is false,
// and in the cells with no single mode every certificate is.
func TestJudge(t *testing.T) {
	one := cellNamed(t, "1-mode")
	harm := cellNamed(t, "5-harmonic")
	two := cellNamed(t, "7-close")
	for _, tc := range []struct {
		name                string
		c                   cell
		e                   estimate
		err                 string
		bar, falseCert, in2 bool
	}{
		{"certified in the bar", one, est(true, 1, 0.021, 0.005), "", true, false, true},
		{"certified 1.2 % off in γ0", one, est(true, 1, 0.02, 0.012), "", false, true, false},
		{"certified 1.2 % low in γ0", one, est(true, 1, 0.02, -0.012), "", false, true, false},
		{"certified ζ 31 % off", one, est(true, 1, 0.0262, 0), "", false, true, false},
		{"certified ζ 29 % off", one, est(true, 1, 0.0258, 0), "", true, false, true},
		{"refused outside the bar", one, est(false, 1, 0.03, 0.05), "", false, false, false},
		{"refused in the bar", one, est(false, 1, 0.02, 0), "", true, false, true},
		{"no estimate", one, est(true, 1, 0.02, 0), "exit status 1", false, false, false},
		{"harmonic cell, certified at the mode", harm, est(true, 1, 0.01, 0), "", true, true, true},
		{"harmonic cell, certified at the forcing", harm, est(true, 1.3, 0.001, 0), "", false, true, false},
		{"harmonic cell, refused", harm, est(false, 1.3, 0.001, 0), "", false, false, false},
		{"close modes, certified", two, est(true, 1.015, 0.02, 0), "", false, true, false},
	} {
		o := outcome{seed: 1, est: tc.e, err: tc.err}
		judge(tc.c, &o)
		if o.inBar != tc.bar || o.falseCert != tc.falseCert || o.within2 != tc.in2 {
			t.Errorf("%s: in the bar %v, false %v, within 2σ %v; want %v, %v, %v", tc.name, o.inBar, o.falseCert, o.within2, tc.bar, tc.falseCert, tc.in2)
		}
	}
}

// judged are hand-made outcomes of c, judged.
func judged(c cell, es ...estimate) row {
	r := row{c: c}
	for i, e := range es {
		o := outcome{seed: i + 1, est: e, code: map[bool]int{true: 0, false: 3}[e.Certified], wall: time.Duration(i+1) * time.Second}
		judge(c, &o)
		r.os = append(r.os, o)
	}
	return r
}

// A cell's summary counts certificates, the bar, false ones and 2σ, and
// the report totals the false certificates.
func TestReport(t *testing.T) {
	one := judged(cellNamed(t, "1-mode"),
		est(true, 1, 0.02, 0.001), est(true, 1, 0.02, 0.012), est(false, 1, 0.03, 0.002), est(false, 1, 0.021, 0))
	harm := judged(cellNamed(t, "5-harmonic"), est(true, 1, 0.01, 0), est(false, 1.3, 0.001, 0))
	harm.os = append(harm.os, outcome{seed: 3, err: "exit status 1: estimate: too short"})
	s := summarize(one)
	if s.seeds != 4 || s.estimated != 4 || s.inBar != 2 || s.certified != 2 || s.certBar != 1 || s.falses != 1 || s.within != 2 || s.withinCert != 1 {
		t.Errorf("cell 1: %+v", s)
	}
	if math.Abs(s.medG0Err-0.0015) > 1e-12 || math.Abs(s.rmsZetaErr-math.Sqrt((0.25+0.0025)/4)) > 1e-12 {
		t.Errorf("cell 1 errors: median γ0 %v, rms ζ %v", s.medG0Err, s.rmsZetaErr)
	}
	if s.medWall != 2500*time.Millisecond || s.refusalN != 2 || !strings.HasPrefix(s.refusal, "σ(ζ) is 31 %") {
		t.Errorf("cell 1: wall %v, refusal %q (%d)", s.medWall, s.refusal, s.refusalN)
	}
	if s.met(targetBar) != "**no**" {
		t.Errorf("cell 1 met its target with 2 of 4 in the bar")
	}
	// Issue 45's target reads the estimates, certified or not, and asks
	// for no false certificate.
	for _, c := range []struct {
		s    stats
		want string
	}{
		{stats{seeds: 10, estimated: 10, inBar: 9, within: 9}, "yes"},
		{stats{seeds: 10, estimated: 10, inBar: 8, within: 10}, "**no**"},
		{stats{seeds: 10, estimated: 10, inBar: 9, within: 9, certified: 5, falses: 1}, "**no**"},
	} {
		if got := c.s.met(targetBar); got != c.want {
			t.Errorf("%+v met %q, want %q", c.s, got, c.want)
		}
	}
	h := summarize(harm)
	if h.seeds != 3 || h.estimated != 2 || h.certified != 1 || h.certBar != 0 || h.falses != 1 || h.met(targetNone) != "**no**" {
		t.Errorf("harmonic cell: %+v", h)
	}
	var b bytes.Buffer
	report(&b, config{seeds: 4}, []row{one, harm}, time.Minute)
	out := b.String()
	for _, want := range []string{
		"**False certificates: 2 of 7 estimates** (3 certified; no estimate from 1 run).",
		"| 1-mode-z2-10min | mode 1 Hz ζ 2 % 1 px rms; 10 min, 64×64 | ",
		"| 4 | 2 | 2 | 1 | 1 | 2/4 | 1/2 | 0.15 | 25.1 | 2.5 | σ(ζ) is 31 % of ζ",
		"| 1-mode-z2-10min | 2 | 1.0060 ± 0.002 / 1 | 0.0200 ± 0.003 / 0.02 | certified | **false** |",
		"| 5-harmonic-1.3Hz | 3 | — / 1 | — / 0.01 | error |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
