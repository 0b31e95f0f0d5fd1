// Package realvid reads the truth table of the real-footage dev set
// (../shared/realvid/truth.tsv: real camera clips with independently
// measured γ0 and γ1) and judges physd's estimates against it.
//
// The table is tab-separated, one case a row, with the columns
//
//	name  file  flags  expect  gamma0  gamma0_tol_rel  gamma1  gamma1_tol_abs
//
// Lines starting with '#' and blank lines are ignored. flags are physd
// estimate's flags (--from/--to seconds, --roi x,y,w,h), separated by
// spaces. expect is certified, not-certified or any (refused, or
// certified and right). gamma0 = 0 means no γ0 truth and
// gamma1_tol_abs = 0 no γ1 truth.
package realvid

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Expect is what a case expects of physd's certificate.
type Expect string

// The expectations a case can have.
const (
	// ExpectCertified: certified, and within tolerance of the truth.
	ExpectCertified Expect = "certified"
	// ExpectNotCertified: not certified (the clip cannot identify the
	// coefficients, e.g. under one period).
	ExpectNotCertified Expect = "not-certified"
	// ExpectAny: either refused (not certified), or certified and within
	// tolerance.
	ExpectAny Expect = "any"
)

// Columns are the names of truth.tsv's columns, in order.
var Columns = []string{"name", "file", "flags", "expect", "gamma0", "gamma0_tol_rel", "gamma1", "gamma1_tol_abs"}

// Case is one row of the truth table.
type Case struct {
	// Name identifies the case; it is also used in file names, so it
	// holds only letters, digits, '_', '-' and '.'.
	Name string
	// File is the video, relative to the table's directory.
	File string
	// Args are physd estimate's flags for the case, split at spaces.
	Args []string
	// Expect is what the certificate should do.
	Expect Expect
	// Gamma0 is the true γ0 (/s²); 0 when none is given.
	Gamma0 float64
	// Gamma0TolRel is the tolerance on γ0, relative to Gamma0.
	Gamma0TolRel float64
	// Gamma1 is the true γ1 (/s); meaningful only when Gamma1TolAbs > 0.
	Gamma1 float64
	// Gamma1TolAbs is the absolute tolerance on γ1 (/s); 0 when no γ1
	// truth is given.
	Gamma1TolAbs float64
	// Line is the row's line number in the table (1-based).
	Line int
}

// HasGamma0 reports whether the case gives a γ0 truth.
func (c Case) HasGamma0() bool { return c.Gamma0 > 0 }

// HasGamma1 reports whether the case gives a γ1 truth.
func (c Case) HasGamma1() bool { return c.Gamma1TolAbs > 0 }

// Path is the case's video in the table's directory dir.
func (c Case) Path(dir string) string { return filepath.Join(dir, c.File) }

// ParseFile reads a truth table from path.
func ParseFile(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("realvid: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a truth table from r; name (the file's path) is used in
// error messages, which also give the line and the column at fault.
func Parse(r io.Reader, name string) ([]Case, error) {
	var cases []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if line == 1 && strings.Join(fields, "\t") == strings.Join(Columns, "\t") {
			continue // an uncommented header
		}
		c, err := parseRow(fields, line)
		if err != nil {
			return nil, fmt.Errorf("realvid: %s:%d: %w", name, line, err)
		}
		if prev, ok := seen[c.Name]; ok {
			return nil, fmt.Errorf("realvid: %s:%d: name: case %q already defined on line %d", name, line, c.Name, prev)
		}
		seen[c.Name] = line
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("realvid: %s:%d: %w", name, line+1, err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("realvid: %s: %w", name, ErrNoCases)
	}
	return cases, nil
}

// ErrNoCases is returned for a table without a single case.
var ErrNoCases = errors.New("no cases")

func parseRow(fields []string, line int) (Case, error) {
	if len(fields) != len(Columns) {
		return Case{}, fmt.Errorf("%d tab-separated fields, want %d (%s)", len(fields), len(Columns), strings.Join(Columns, ", "))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	c := Case{Name: fields[0], File: fields[1], Args: strings.Fields(fields[2]), Expect: Expect(fields[3]), Line: line}
	if c.Name == "" {
		return Case{}, errors.New("name: empty")
	}
	for _, r := range c.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return Case{}, fmt.Errorf("name: %q has %q; use letters, digits, '_', '-' and '.'", c.Name, r)
		}
	}
	if c.File == "" {
		return Case{}, errors.New("file: empty")
	}
	if filepath.IsAbs(c.File) {
		return Case{}, fmt.Errorf("file: %q is absolute; give it relative to the table", c.File)
	}
	switch c.Expect {
	case ExpectCertified, ExpectNotCertified, ExpectAny:
	default:
		return Case{}, fmt.Errorf("expect: %q is not %s, %s or %s", fields[3], ExpectCertified, ExpectNotCertified, ExpectAny)
	}
	nums := []*float64{&c.Gamma0, &c.Gamma0TolRel, &c.Gamma1, &c.Gamma1TolAbs}
	for i, p := range nums {
		col := Columns[4+i]
		v, err := strconv.ParseFloat(fields[4+i], 64)
		if err != nil {
			return Case{}, fmt.Errorf("%s: %w", col, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Case{}, fmt.Errorf("%s: %v is not a finite number", col, v)
		}
		// γ1 may be negative (a growing oscillation); the rest may not.
		if v < 0 && col != "gamma1" {
			return Case{}, fmt.Errorf("%s: %v is negative", col, v)
		}
		*p = v
	}
	switch {
	case c.Gamma0 > 0 && c.Gamma0TolRel == 0:
		return Case{}, fmt.Errorf("gamma0_tol_rel: 0 with gamma0 %v; a truth needs a tolerance", c.Gamma0)
	case c.Gamma0 == 0 && c.Gamma0TolRel != 0:
		return Case{}, fmt.Errorf("gamma0_tol_rel: %v without a gamma0 truth", c.Gamma0TolRel)
	case c.Gamma1 != 0 && c.Gamma1TolAbs == 0:
		return Case{}, fmt.Errorf("gamma1_tol_abs: 0 with gamma1 %v; a truth needs a tolerance", c.Gamma1)
	case c.Gamma1TolAbs > 0 && c.Gamma0 == 0:
		return Case{}, errors.New("gamma1_tol_abs: a gamma1 truth without a gamma0 truth")
	case c.Expect != ExpectNotCertified && c.Gamma0 == 0:
		return Case{}, fmt.Errorf("gamma0: expect %s needs a gamma0 truth to judge a certificate by", c.Expect)
	}
	return c, nil
}

// WithoutFlag returns a copy of args without the flag name (given without
// dashes) and its value, in any of the forms -name v, --name v, -name=v
// and --name=v. Arguments after a "--" are left alone.
func WithoutFlag(args []string, name string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		bare := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if bare == name {
			i++ // and its value
			continue
		}
		if strings.HasPrefix(bare, name+"=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// WithoutROI returns a copy of args without --roi and its value: the
// case as a user who draws no region runs it (physd estimate then finds
// the region where the scene oscillates, or uses the whole frame).
func WithoutROI(args []string) []string { return WithoutFlag(args, "roi") }

// Outcome is what physd estimate reported for a case.
type Outcome struct {
	// Certified is the certificate: Identified, and PrecisionHolds.
	Certified bool
	// Identified: the paper's uniqueness conditions hold (coverage,
	// conditioning, fit), so (γ0, γ1) is the unique answer the window
	// supports, however imprecise.
	Identified     bool
	Gamma0, Gamma1 float64
	Sigma0, Sigma1 float64 // 1σ of Gamma0 and Gamma1
	// RelSigmaFn is σ(f_n)/f_n and SigmaZeta σ(ζ); LimitFn and LimitZeta
	// are the precision condition's limits on them. NaN when not reported.
	RelSigmaFn, SigmaZeta float64
	LimitFn, LimitZeta    float64
	// PrecisionHolds: both σ are within their limits.
	PrecisionHolds bool
}

// Imprecise reports whether the outcome is identified but refused for
// precision: unique, yet its σ beyond the limits.
func (o Outcome) Imprecise() bool { return o.Identified && !o.PrecisionHolds }

// Judgement is how an outcome compares with a case's truth and
// expectation.
type Judgement struct {
	// WithinTolerance: the case gives a γ0 truth, |γ0−γ0*| ≤
	// tol_rel·γ0*, and, if it gives a γ1 truth, |γ1−γ1*| ≤ tol_abs.
	WithinTolerance bool
	// AsExpected: for certified, certified and within tolerance; for
	// not-certified, not certified; for any, not certified, or certified
	// and within tolerance.
	AsExpected bool
	// FalseCertificate: certified, and outside tolerance or on a
	// not-certified case.
	FalseCertificate bool
	// FalseIdentified: identified (whatever the precision), and outside
	// tolerance or on a not-certified case: a false certificate but for
	// the precision condition.
	FalseIdentified bool
}

// WithinTolerance reports whether (γ0, γ1) are within the case's
// tolerances; false when the case gives no γ0 truth, or either value is
// NaN.
func (c Case) WithinTolerance(gamma0, gamma1 float64) bool {
	if !c.HasGamma0() || !(math.Abs(gamma0-c.Gamma0) <= c.Gamma0TolRel*c.Gamma0) {
		return false
	}
	return !c.HasGamma1() || math.Abs(gamma1-c.Gamma1) <= c.Gamma1TolAbs
}

// Judge compares an outcome with the case's truth and expectation.
func (c Case) Judge(o Outcome) Judgement {
	j := Judgement{WithinTolerance: c.WithinTolerance(o.Gamma0, o.Gamma1)}
	switch c.Expect {
	case ExpectCertified:
		j.AsExpected = o.Certified && j.WithinTolerance
	case ExpectNotCertified:
		j.AsExpected = !o.Certified
	case ExpectAny:
		j.AsExpected = !o.Certified || j.WithinTolerance
	}
	wrong := !j.WithinTolerance || c.Expect == ExpectNotCertified
	j.FalseCertificate = o.Certified && wrong
	j.FalseIdentified = o.Identified && wrong
	return j
}

// Gamma0RelErr is |γ0−γ0*|/γ0*; NaN when the case gives no γ0 truth.
func (c Case) Gamma0RelErr(gamma0 float64) float64 {
	if !c.HasGamma0() {
		return math.NaN()
	}
	return math.Abs(gamma0-c.Gamma0) / c.Gamma0
}

// WithinSigma reports, for each coefficient with a truth, whether the
// outcome's error is at most k of its reported σ: |γ0−γ0*| ≤ k·σ0 and
// |γ1−γ1*| ≤ k·σ1. has0 and has1 say whether the case gives that truth;
// without it the answer is false.
func (c Case) WithinSigma(o Outcome, k float64) (in0, in1, has0, has1 bool) {
	has0, has1 = c.HasGamma0(), c.HasGamma1()
	in0 = has0 && math.Abs(o.Gamma0-c.Gamma0) <= k*o.Sigma0
	in1 = has1 && math.Abs(o.Gamma1-c.Gamma1) <= k*o.Sigma1
	return in0, in1, has0, has1
}

// Select returns the cases named in names, in the table's order; nil or
// empty names selects every case. A name not in the table is an error.
func Select(cases []Case, names []string) ([]Case, error) {
	if len(names) == 0 {
		return cases, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []Case
	for _, c := range cases {
		if want[c.Name] {
			out = append(out, c)
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		var missing []string
		for _, n := range names {
			if want[n] {
				missing = append(missing, n)
				want[n] = false
			}
		}
		return nil, fmt.Errorf("realvid: no case named %s", strings.Join(missing, ", "))
	}
	return out, nil
}
