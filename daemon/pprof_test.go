//go:build !nocv

package daemon

import (
	"net/http"
	"strings"
	"testing"
)

// The runtime's profiles are served only when http.pprof asks, and then
// only to operators: with http.token set, a request without it is
// refused like /metrics.
func TestPprofOnlyWhenAsked(t *testing.T) {
	off := start(t, authConfig(), t.TempDir())
	url := "http://" + off.d.HTTPAddr() + "/debug/pprof/heap?debug=1"
	if rep := authClient(t, http.MethodGet, url, authGlobal, "", ""); rep.code != http.StatusNotFound {
		t.Errorf("http.pprof off: %d, want 404", rep.code)
	}
	cfg := authConfig()
	cfg.HTTP.Pprof = true
	on := start(t, cfg, t.TempDir())
	url = "http://" + on.d.HTTPAddr() + "/debug/pprof/heap?debug=1"
	for _, tok := range []string{"", "wrong-token", authPhone} {
		if rep := authClient(t, http.MethodGet, url, tok, "", ""); rep.code != http.StatusUnauthorized {
			t.Errorf("heap profile with token %q: %d, want 401", tok, rep.code)
		}
	}
	rep := authClient(t, http.MethodGet, url, authGlobal, "", "")
	if rep.code != http.StatusOK || !strings.Contains(rep.body, "heap profile") {
		t.Errorf("heap profile with the operator's token: %d %.80q", rep.code, rep.body)
	}
}
