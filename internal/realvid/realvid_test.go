package realvid

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const header = "# name\tfile\tflags\texpect\tgamma0\tgamma0_tol_rel\tgamma1\tgamma1_tol_abs\n"

func TestParse(t *testing.T) {
	in := header +
		"# a comment\n" +
		"\n" +
		"ballOil\tballOil.mp4\t--from 0.75 --to 8.25 --roi 290,60,70,380\tcertified\t38.25\t0.03\t1.09\t0.15\n" +
		"short\tballOil.mp4\t--from 0.75  --to 1.6\tnot-certified\t0\t0\t0\t0\r\n" +
		"whole\tsub/springWars.mp4\t\tany\t11.87\t0.02\t0\t0\n"
	got, err := Parse(strings.NewReader(in), "truth.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{Name: "ballOil", File: "ballOil.mp4", Args: []string{"--from", "0.75", "--to", "8.25", "--roi", "290,60,70,380"},
			Expect: ExpectCertified, Gamma0: 38.25, Gamma0TolRel: 0.03, Gamma1: 1.09, Gamma1TolAbs: 0.15, Line: 4},
		{Name: "short", File: "ballOil.mp4", Args: []string{"--from", "0.75", "--to", "1.6"}, Expect: ExpectNotCertified, Line: 5},
		{Name: "whole", File: "sub/springWars.mp4", Args: []string{}, Expect: ExpectAny, Gamma0: 11.87, Gamma0TolRel: 0.02, Line: 6},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if !got[0].HasGamma0() || !got[0].HasGamma1() || got[1].HasGamma0() || got[1].HasGamma1() || !got[2].HasGamma0() || got[2].HasGamma1() {
		t.Errorf("HasGamma0/HasGamma1 wrong: %+v", got)
	}
	if p := got[2].Path("/data"); p != "/data/sub/springWars.mp4" {
		t.Errorf("Path = %q", p)
	}
}

func TestParseUncommentedHeader(t *testing.T) {
	in := strings.Join(Columns, "\t") + "\n" + "a\ta.mp4\t\tnot-certified\t0\t0\t0\t0\n"
	got, err := Parse(strings.NewReader(in), "t.tsv")
	if err != nil || len(got) != 1 || got[0].Name != "a" || got[0].Line != 2 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestParseMalformed(t *testing.T) {
	const ok = "a\ta.mp4\t--from 1\tcertified\t10\t0.02\t0.5\t0.1"
	cases := []struct {
		name, row string
		want      string // in the error, after "t.tsv:LINE: "
	}{
		{"too few fields", "a\ta.mp4\t--from 1\tcertified\t10\t0.02\t0.5", "7 tab-separated fields, want 8"},
		{"too many fields", ok + "\textra", "9 tab-separated fields, want 8"},
		{"spaces not tabs", "a a.mp4 --from 1 certified 10 0.02 0.5 0.1", "1 tab-separated fields"},
		{"empty name", "\ta.mp4\t\tcertified\t10\t0.02\t0.5\t0.1", "name: empty"},
		{"bad name", "a/b\ta.mp4\t\tcertified\t10\t0.02\t0.5\t0.1", "name: \"a/b\" has '/'"},
		{"empty file", "a\t\t\tcertified\t10\t0.02\t0.5\t0.1", "file: empty"},
		{"absolute file", "a\t/x/a.mp4\t\tcertified\t10\t0.02\t0.5\t0.1", "file: \"/x/a.mp4\" is absolute"},
		{"bad expect", "a\ta.mp4\t\tcertain\t10\t0.02\t0.5\t0.1", "expect: \"certain\" is not"},
		{"gamma0 not a number", "a\ta.mp4\t\tcertified\tten\t0.02\t0.5\t0.1", "gamma0: strconv.ParseFloat"},
		{"gamma0 NaN", "a\ta.mp4\t\tcertified\tNaN\t0.02\t0.5\t0.1", "gamma0: NaN is not a finite number"},
		{"tol empty", "a\ta.mp4\t\tcertified\t10\t\t0.5\t0.1", "gamma0_tol_rel: strconv.ParseFloat"},
		{"gamma1 Inf", "a\ta.mp4\t\tcertified\t10\t0.02\tInf\t0.1", "gamma1: +Inf is not a finite number"},
		{"negative gamma0", "a\ta.mp4\t\tcertified\t-10\t0.02\t0.5\t0.1", "gamma0: -10 is negative"},
		{"negative tol", "a\ta.mp4\t\tcertified\t10\t0.02\t0.5\t-0.1", "gamma1_tol_abs: -0.1 is negative"},
		{"truth without tol", "a\ta.mp4\t\tcertified\t10\t0\t0.5\t0.1", "gamma0_tol_rel: 0 with gamma0 10"},
		{"tol without truth", "a\ta.mp4\t\tnot-certified\t0\t0.02\t0\t0", "gamma0_tol_rel: 0.02 without a gamma0 truth"},
		{"gamma1 without tol", "a\ta.mp4\t\tcertified\t10\t0.02\t0.5\t0", "gamma1_tol_abs: 0 with gamma1 0.5"},
		{"gamma1 without gamma0", "a\ta.mp4\t\tnot-certified\t0\t0\t0.5\t0.1", "gamma1_tol_abs: a gamma1 truth without a gamma0 truth"},
		{"certified without truth", "a\ta.mp4\t\tcertified\t0\t0\t0\t0", "gamma0: expect certified needs a gamma0 truth"},
		{"any without truth", "a\ta.mp4\t\tany\t0\t0\t0\t0", "gamma0: expect any needs a gamma0 truth"},
		{"duplicate name", ok + "\n" + ok, "name: case \"a\" already defined on line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := header + c.row + "\n"
			_, err := Parse(strings.NewReader(in), "t.tsv")
			if err == nil {
				t.Fatalf("no error for %q", c.row)
			}
			line := "2"
			if c.name == "duplicate name" {
				line = "3"
			}
			if want := "realvid: t.tsv:" + line + ": " + c.want; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start with %q", err, want)
			}
		})
	}
}

func TestParseEmpty(t *testing.T) {
	_, err := Parse(strings.NewReader(header+"# nothing\n\n"), "t.tsv")
	if !errors.Is(err, ErrNoCases) || !strings.Contains(err.Error(), "t.tsv") {
		t.Errorf("error %v, want ErrNoCases naming the file", err)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "truth.tsv")
	if err := os.WriteFile(p, []byte(header+"a\ta.mp4\t\tnot-certified\t0\t0\t0\t0\nb\tb.mp4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(p); err == nil || !strings.Contains(err.Error(), p+":3: ") {
		t.Errorf("error %v, want it to name %s:3", err, p)
	}
	if _, err := ParseFile(filepath.Join(dir, "missing.tsv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist wrapped", err)
	}
}

func TestWithoutFlag(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--from", "0.75", "--to", "8.25", "--roi", "290,60,70,380"}, []string{"--from", "0.75", "--to", "8.25"}},
		{[]string{"--roi", "1,2,3,4", "--from", "1"}, []string{"--from", "1"}},
		{[]string{"-roi", "1,2,3,4", "--from", "1"}, []string{"--from", "1"}},
		{[]string{"--roi=1,2,3,4", "--from", "1"}, []string{"--from", "1"}},
		{[]string{"-roi=1,2,3,4"}, []string{}},
		{[]string{"--from", "1", "--roi"}, []string{"--from", "1"}},
		{[]string{"--roix", "1", "--from", "1"}, []string{"--roix", "1", "--from", "1"}},
		{[]string{"--from", "1", "--", "--roi", "x"}, []string{"--from", "1", "--", "--roi", "x"}},
		{nil, []string{}},
	}
	for _, c := range cases {
		in := append([]string(nil), c.args...)
		got := WithoutROI(c.args)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("WithoutROI(%q) = %q, want %q", c.args, got, c.want)
		}
		if !reflect.DeepEqual(in, c.args) {
			t.Errorf("WithoutROI changed its argument: %q → %q", in, c.args)
		}
	}
	if got := WithoutFlag([]string{"--from", "1", "--to", "2"}, "from"); !reflect.DeepEqual(got, []string{"--to", "2"}) {
		t.Errorf("WithoutFlag from: %q", got)
	}
}

func TestJudge(t *testing.T) {
	cert := Case{Name: "c", Expect: ExpectCertified, Gamma0: 10, Gamma0TolRel: 0.02, Gamma1: 0.5, Gamma1TolAbs: 0.1}
	g0only := Case{Name: "g", Expect: ExpectCertified, Gamma0: 10, Gamma0TolRel: 0.02}
	refuse := Case{Name: "n", Expect: ExpectNotCertified}
	refuseTruth := Case{Name: "nt", Expect: ExpectNotCertified, Gamma0: 10, Gamma0TolRel: 0.02}
	anyc := Case{Name: "a", Expect: ExpectAny, Gamma0: 10, Gamma0TolRel: 0.02, Gamma1: 0.5, Gamma1TolAbs: 0.1}
	nan := math.NaN()
	cases := []struct {
		name string
		c    Case
		o    Outcome
		want Judgement
	}{
		{"certified, right", cert, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10.19, Gamma1: 0.41}, Judgement{true, true, false, false}},
		{"certified, on the edges", cert, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 9.8, Gamma1: 0.6}, Judgement{true, true, false, false}},
		{"certified, γ0 off", cert, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10.21, Gamma1: 0.5}, Judgement{false, false, true, true}},
		{"certified, γ1 off", cert, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10, Gamma1: 0.61}, Judgement{false, false, true, true}},
		{"certified, γ0 NaN", cert, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: nan, Gamma1: 0.5}, Judgement{false, false, true, true}},
		{"refused, right", cert, Outcome{Gamma0: 10, Gamma1: 0.5}, Judgement{true, false, false, false}},
		{"refused, wrong", cert, Outcome{Gamma0: 20, Gamma1: 0.5}, Judgement{false, false, false, false}},
		{"γ0 only, any γ1", g0only, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10.1, Gamma1: -3}, Judgement{true, true, false, false}},
		{"not-certified, refused", refuse, Outcome{Gamma0: 3}, Judgement{false, true, false, false}},
		{"not-certified, certified", refuse, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 3}, Judgement{false, false, true, true}},
		{"not-certified with truth, certified right", refuseTruth, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10}, Judgement{true, false, true, true}},
		{"any, refused", anyc, Outcome{Gamma0: 99}, Judgement{false, true, false, false}},
		{"any, certified right", anyc, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10.1, Gamma1: 0.55}, Judgement{true, true, false, false}},
		{"any, certified wrong", anyc, Outcome{Certified: true, Identified: true, PrecisionHolds: true, Gamma0: 10.1, Gamma1: 0.7}, Judgement{false, false, true, true}},
		// Identified but refused for precision: not a certificate, yet a
		// false one but for the precision condition when it is wrong.
		{"identified, imprecise, right", cert, Outcome{Identified: true, Gamma0: 10.1, Gamma1: 0.5}, Judgement{true, false, false, false}},
		{"identified, imprecise, wrong", cert, Outcome{Identified: true, Gamma0: 11, Gamma1: 0.5}, Judgement{false, false, false, true}},
		{"identified, imprecise, on not-certified", refuseTruth, Outcome{Identified: true, Gamma0: 10}, Judgement{true, true, false, true}},
	}
	for _, c := range cases {
		if got := c.c.Judge(c.o); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestImprecise(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want bool
	}{
		{Outcome{Certified: true, Identified: true, PrecisionHolds: true}, false},
		{Outcome{Identified: true}, true},
		{Outcome{PrecisionHolds: true}, false},
		{Outcome{}, false},
	} {
		if got := c.o.Imprecise(); got != c.want {
			t.Errorf("%+v: Imprecise = %v, want %v", c.o, got, c.want)
		}
	}
}

func TestWithinSigma(t *testing.T) {
	c := Case{Expect: ExpectCertified, Gamma0: 10, Gamma0TolRel: 0.02, Gamma1: 0.5, Gamma1TolAbs: 0.1}
	cases := []struct {
		c                    Case
		o                    Outcome
		in0, in1, has0, has1 bool
	}{
		{c, Outcome{Gamma0: 10.2, Sigma0: 0.1, Gamma1: 0.45, Sigma1: 0.02}, true, false, true, true},
		{c, Outcome{Gamma0: 10.3, Sigma0: 0.1, Gamma1: 0.45, Sigma1: 0.03}, false, true, true, true},
		{c, Outcome{Gamma0: math.NaN(), Sigma0: 1, Gamma1: 0.5, Sigma1: 0}, false, true, true, true},
		{Case{Expect: ExpectNotCertified}, Outcome{Gamma0: 0, Sigma0: 1}, false, false, false, false},
		{Case{Expect: ExpectAny, Gamma0: 10, Gamma0TolRel: 0.1}, Outcome{Gamma0: 10, Sigma0: 0, Gamma1: 0}, true, false, true, false},
	}
	for i, c := range cases {
		in0, in1, has0, has1 := c.c.WithinSigma(c.o, 2)
		if in0 != c.in0 || in1 != c.in1 || has0 != c.has0 || has1 != c.has1 {
			t.Errorf("%d: WithinSigma = %v %v %v %v, want %v %v %v %v", i, in0, in1, has0, has1, c.in0, c.in1, c.has0, c.has1)
		}
	}
	if e := c.Gamma0RelErr(10.5); math.Abs(e-0.05) > 1e-12 {
		t.Errorf("Gamma0RelErr = %v", e)
	}
	if e := (Case{}).Gamma0RelErr(1); !math.IsNaN(e) {
		t.Errorf("Gamma0RelErr without truth = %v, want NaN", e)
	}
}

func TestSelect(t *testing.T) {
	cs := []Case{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	names := func(cs []Case) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name)
		}
		return strings.Join(s, ",")
	}
	if got, err := Select(cs, nil); err != nil || names(got) != "a,b,c" {
		t.Errorf("Select(nil) = %s, %v", names(got), err)
	}
	if got, err := Select(cs, []string{"c", "a", "c"}); err != nil || names(got) != "a,c" {
		t.Errorf("Select(c,a,c) = %s, %v", names(got), err)
	}
	if _, err := Select(cs, []string{"a", "x", "y", "x"}); err == nil || !strings.Contains(err.Error(), "no case named x, y") {
		t.Errorf("Select(a,x,y,x): error %v", err)
	}
}
