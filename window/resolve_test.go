package window

import (
	"strings"
	"testing"
)

// Resolve refuses a certified verdict whose motion is below MinResolved
// times its floor, keeps a refused verdict's status while saying why, and
// records a passed check otherwise.
func TestResolve(t *testing.T) {
	v := Verdict{Status: Certified, Certified: true, Identified: true}
	v.Resolve(0.05, 0.01, 0)
	if v.Certified || v.Status != NotCertified || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "0.05 px") {
		t.Errorf("certified below the floor: %+v", v)
	}
	u := Verdict{Status: UndampedDiscrete}
	u.Resolve(0.0012, 0.0034, 0.1)
	if u.Status != UndampedDiscrete || len(u.Reasons) != 1 || !strings.Contains(u.Reasons[0], "0.0034 px") {
		t.Errorf("refused below the floor: %+v", u)
	}
	if strings.Contains(v.Reasons[0]+u.Reasons[0], "codec") {
		t.Errorf("the codec named below HeldNote: %q, %q", v.Reasons[0], u.Reasons[0])
	}
	h := Verdict{Status: NotCertified}
	h.Resolve(0.05, 0.01, 0.42)
	if len(h.Reasons) != 1 || !strings.Contains(h.Reasons[0], "codec held the moving pixels still in 42%") {
		t.Errorf("held by the codec, not said: %+v", h)
	}
	ok := Verdict{Status: Certified, Certified: true, Identified: true}
	ok.Resolve(1, 0.01, 0.6)
	if !ok.Certified || len(ok.Checks) != 1 || !ok.Checks[0].Passed || ok.Checks[0].Name != CheckResolved || len(ok.Reasons) != 0 {
		t.Errorf("resolved: %+v", ok)
	}
	// Resolved but refused for another reason, the codec having held the
	// motion in much of the window: the refusal names it, the check passes.
	r := Verdict{Status: NotCertified, Reasons: []string{"poor fit"}}
	r.Resolve(0.6, 0.03, 0.43)
	if r.Status != NotCertified || len(r.Reasons) != 2 || !strings.Contains(r.Reasons[1], "codec held the moving pixels still in 43%") || !r.Checks[0].Passed {
		t.Errorf("resolved, refused, held by the codec: %+v", r)
	}
	q := Verdict{Status: NotCertified, Reasons: []string{"poor fit"}}
	q.Resolve(0.6, 0.03, 0.1)
	if len(q.Reasons) != 1 {
		t.Errorf("resolved, refused, the codec named below HeldNote: %+v", q)
	}
}
