package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/physd/physd/sim"
)

// A certified number is in the bar of the mode it is within 1 % in γ0
// and 25 % in ζ of, whichever it is; outside every mode's bar it is
// false, and a mode two numbers hit is found once.
func TestJudge(t *testing.T) {
	ms := []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 0.5}, {Fn: 2.7, Zeta: 0.02, AmplitudePx: 0.2}}
	num := func(m sim.Mode, dg0, kz float64) number {
		g1, g0 := m.Gammas()
		return number{Gamma0: g0 * (1 + dg0), Gamma1: g1 * kz, Zeta: m.Zeta * kz, Certified: true}
	}
	for _, c := range []struct {
		name                     string
		e                        estimate
		inBar, falses, found, ns int
	}{
		{"window in the bar of mode 1", estimate{number: num(ms[0], 0.009, 1.2)}, 1, 0, 1, 0},
		{"window 2 % off", estimate{number: num(ms[0], 0.02, 1)}, 0, 1, 0, 0},
		{"window ζ 30 % off", estimate{number: num(ms[1], 0, 1.3)}, 0, 1, 0, 0},
		{"refused window, both modes certified", estimate{number: number{Gamma0: 40}, Modes: &separated{Modes: []mode{{number: num(ms[0], 0, 1)}, {number: num(ms[1], -0.005, 0.9)}}}}, 2, 0, 2, 2},
		{"window and mode 1 both on mode 1, a false mode", estimate{number: num(ms[0], 0, 1), Modes: &separated{Modes: []mode{{number: num(ms[0], 0.001, 1)}, {number: num(ms[1], 0.05, 1)}, {number: number{Gamma0: 1}}}}}, 2, 1, 1, 3},
	} {
		o := judge(c.e, ms)
		if o.inBar != c.inBar || o.falses != c.falses || o.found != c.found || o.separated != c.ns {
			t.Errorf("%s: in the bar %d, false %d, found %d, separated %d; want %d, %d, %d, %d", c.name, o.inBar, o.falses, o.found, o.separated, c.inBar, c.falses, c.found, c.ns)
		}
	}
}

// The report sums the false certificates over every cell.
func TestReportCountsFalseCertificates(t *testing.T) {
	rows := map[cell][]outcome{}
	cs := cells()
	rows[cs[0]] = []outcome{{seed: 1, inBar: 2, found: 2}, {seed: 2, falses: 1}}
	rows[cs[len(cs)-1]] = []outcome{{seed: 1, falses: 2, est: estimate{Reasons: []string{"poor fit: 0.37 of its size"}}}}
	var b bytes.Buffer
	report(&b, config{}, rows, 0)
	for _, want := range []string{"**False certificates: 3**", "poor fit: # of its size", "Modes found in the scenes whose modes stand apart: 2 of 4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// Every scene is swept as every object kind, lossless and compressed.
func TestCells(t *testing.T) {
	if got, want := len(cells()), 8*len(scenes()); got != want {
		t.Errorf("%d cells, want %d", got, want)
	}
	for _, s := range scenes() {
		if len(s.modes) < 2 {
			t.Errorf("scene %s has %d modes", s.name, len(s.modes))
		}
	}
}
