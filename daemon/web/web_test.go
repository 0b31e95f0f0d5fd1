package web_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/physd/physd/daemon/web"
)

var pageFiles = []string{"publish.html", "publish.js", "publish.css"}

func TestEmbeddedFiles(t *testing.T) {
	for _, name := range pageFiles {
		data, err := fs.ReadFile(web.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			t.Errorf("%s is empty", name)
		}
		// Offline on a LAN: no CDN, font or analytics URL anywhere.
		for _, bad := range []string{"http://", "https://"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s contains %q: the page must not depend on anything but physd", name, bad)
			}
		}
	}
}

func TestHTMLReferencesLocalAssets(t *testing.T) {
	html, err := fs.ReadFile(web.FS, "publish.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*["']?([^"'\s>]+)`).FindAllStringSubmatch(string(html), -1)
	if len(refs) < 2 {
		t.Fatalf("publish.html references %d assets, want the script and the stylesheet", len(refs))
	}
	for _, m := range refs {
		name, ok := strings.CutPrefix(m[1], web.AssetPrefix)
		if !ok {
			t.Errorf("publish.html references %q, want a path under %s", m[1], web.AssetPrefix)
			continue
		}
		if _, err := fs.Stat(web.FS, name); err != nil {
			t.Errorf("publish.html references %q: %v", m[1], err)
		}
	}
}

func TestScriptParses(t *testing.T) { checkScript(t, "publish.js") }

// checkScript syntax-checks an embedded script with node --check.
func checkScript(t *testing.T, name string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: cannot syntax-check " + name)
	}
	js, err := fs.ReadFile(web.FS, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", path).CombinedOutput(); err != nil {
		t.Fatalf("node --check %s: %v\n%s", name, err, out)
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	for _, tc := range []request{
		{"GET", "/publish/pendulum", 200, "text/html; charset=utf-8", "<!doctype html>"},
		{"GET", "/publish/pendulum/", 200, "text/html; charset=utf-8", "<!doctype html>"},
		{"GET", "/publish/assets", 200, "text/html; charset=utf-8", "<!doctype html>"}, // a camera named "assets"
		{"HEAD", "/publish/pendulum", 200, "text/html; charset=utf-8", ""},
		{"GET", "/publish/assets/publish.js", 200, "text/javascript; charset=utf-8", `"use strict"`},
		{"GET", "/publish/assets/publish.css", 200, "text/css; charset=utf-8", ":root"},
		{"GET", "/publish/assets/publish.html", 404, "", ""},
		{"GET", "/publish/assets/nope.js", 404, "", ""},
		{"GET", "/publish/", 404, "", ""},
		{"GET", "/publish/a/b", 404, "", ""},
		{"GET", "/elsewhere", 404, "", ""},
		{"POST", "/publish/pendulum", 405, "", ""},
	} {
		res := checkRequest(t, srv.URL, tc)
		if res == nil {
			continue
		}
		if strings.HasSuffix(tc.ctype, "html; charset=utf-8") && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s %s: no restrictive Content-Security-Policy", tc.method, tc.path)
		}
	}

	// Revalidation by ETag.
	res, err := http.Get(srv.URL + "/publish/assets/publish.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/publish/assets/publish.js", nil)
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: status %d, want 304", req.Header.Get("If-None-Match"), res.StatusCode)
	}
}

// request is one row of a handler's table test: a request and the
// response expected (Content-Type and a body fragment checked on 200 only).
type request struct {
	method, path string
	status       int
	ctype, body  string
}

// checkRequest sends tc to the server at base and reports a wrong status,
// Content-Type or body. It returns the response (body closed) when it was
// a 200 worth checking further, else nil.
func checkRequest(t *testing.T, base string, tc request) *http.Response {
	t.Helper()
	req, err := http.NewRequest(tc.method, base+tc.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != tc.status {
		t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		return nil
	}
	if tc.status != http.StatusOK {
		return nil
	}
	if got := res.Header.Get("Content-Type"); got != tc.ctype {
		t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, got, tc.ctype)
	}
	if !strings.Contains(string(body), tc.body) {
		t.Errorf("%s %s: body lacks %q", tc.method, tc.path, tc.body)
	}
	return res
}
