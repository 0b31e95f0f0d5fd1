package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/physd/physd/stream"
)

// parseSeconds reads a duration in seconds, also written as a multiple of
// π ("1.5pi", "2.5π") since the paper states clip lengths that way.
func parseSeconds(s string) (float64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	for _, suf := range []string{"pi", "π"} {
		if strings.HasSuffix(t, suf) {
			t, mult = strings.TrimSuffix(t, suf), math.Pi
			if t == "" {
				t = "1"
			}
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number of seconds (e.g. 4.7 or 1.5pi)", s)
	}
	return v * mult, nil
}

// secondsFlag is a flag.Value of seconds accepting the π suffix.
type secondsFlag struct{ v *float64 }

func (f secondsFlag) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f secondsFlag) Set(s string) error {
	v, err := parseSeconds(s)
	if err != nil {
		return err
	}
	*f.v = v
	return nil
}

// parseFloats reads a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a number", p)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseROI reads "x,y,w,h" in the video's pixels.
func parseROI(s string) (stream.ROI, error) {
	if s == "" {
		return stream.ROI{}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return stream.ROI{}, fmt.Errorf("--roi %q: want x,y,w,h", s)
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return stream.ROI{}, fmt.Errorf("--roi %q: %q is not an integer", s, p)
		}
		v[i] = n
	}
	if v[0] < 0 || v[1] < 0 || v[2] <= 0 || v[3] <= 0 {
		return stream.ROI{}, fmt.Errorf("--roi %q: x, y must be ≥ 0 and w, h > 0", s)
	}
	return stream.ROI{X: v[0], Y: v[1], W: v[2], H: v[3]}, nil
}
