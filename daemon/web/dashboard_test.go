package web_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/physd/physd/daemon/web"
)

// TestDashboardFiles: the dashboard depends on nothing but physd (no URL
// of another origin in any file), its page loads only its own assets, and
// it keeps the token out of the query string.
func TestDashboardFiles(t *testing.T) {
	for _, name := range []string{"dashboard.html", "dashboard.js", "dashboard.css"} {
		data, err := fs.ReadFile(web.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "eval(", "innerHTML"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
	html, _ := fs.ReadFile(web.FS, "dashboard.html")
	if strings.Contains(string(html), "style=") || strings.Contains(string(html), "<script>") {
		t.Error("dashboard.html has inline style or script, which the CSP refuses")
	}
	refs := regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*["']?([^"'\s>]+)`).FindAllStringSubmatch(string(html), -1)
	if len(refs) != 2 {
		t.Errorf("dashboard.html references %d assets, want the script and the stylesheet", len(refs))
	}
	for _, m := range refs {
		name, ok := strings.CutPrefix(m[1], web.DashboardAssetPrefix)
		if _, err := fs.Stat(web.FS, name); !ok || err != nil {
			t.Errorf("dashboard.html references %q, want a file under %s", m[1], web.DashboardAssetPrefix)
		}
	}
	js, _ := fs.ReadFile(web.FS, "dashboard.js")
	for _, want := range []string{`location.hash`, `"Bearer "`, "sessionStorage", "getReader()"} {
		if !strings.Contains(string(js), want) {
			t.Errorf("dashboard.js lacks %s", want)
		}
	}
	if regexp.MustCompile(`[?&]token=`).Match(js) {
		t.Error("dashboard.js puts the token in a query string")
	}
}

func TestDashboardScriptParses(t *testing.T) { checkScript(t, "dashboard.js") }

func TestDashboardHandler(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET "+web.DashboardPath, web.DashboardHandler())
	mux.Handle("GET "+web.DashboardPath+"/", web.DashboardHandler())
	mux.Handle("GET "+web.PagePrefix, web.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []request{
		{"GET", "/dashboard", 200, "text/html; charset=utf-8", "<!doctype html>"},
		{"GET", "/dashboard/", 200, "text/html; charset=utf-8", "<!doctype html>"},
		{"HEAD", "/dashboard", 200, "text/html; charset=utf-8", ""},
		{"GET", "/dashboard/assets/dashboard.js", 200, "text/javascript; charset=utf-8", `"use strict"`},
		{"GET", "/dashboard/assets/dashboard.css", 200, "text/css; charset=utf-8", ":root"},
		{"GET", "/dashboard/assets/dashboard.html", 404, "", ""},
		{"GET", "/dashboard/assets/publish.js", 404, "", ""},
		{"GET", "/dashboard/other", 404, "", ""},
		{"GET", "/publish/assets/dashboard.js", 404, "", ""},
		{"GET", "/publish/assets/publish.js", 200, "text/javascript; charset=utf-8", `"use strict"`},
	} {
		res := checkRequest(t, srv.URL, tc)
		if res == nil {
			continue
		}
		if strings.HasPrefix(tc.path, "/dashboard") && strings.HasPrefix(tc.ctype, "text/html") {
			p := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(p, "default-src 'none'") || !strings.Contains(p, "img-src 'self' blob:") || strings.Contains(p, "unsafe") {
				t.Errorf("%s %s: Content-Security-Policy %q", tc.method, tc.path, p)
			}
		}
	}
	res, err := http.Post(srv.URL+"/dashboard", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /dashboard: %d, want 405", res.StatusCode)
	}
}
