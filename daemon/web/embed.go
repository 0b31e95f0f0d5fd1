// Package web holds physd's built-in web pages, embedded in the binary so
// that they work offline on a LAN.
//
// The publish page turns a phone or laptop camera into a physd camera: it
// sends the video over WHIP (RFC 9725) and shows the camera's latest
// estimate. It talks to the daemon through these routes, which the daemon
// serves (not this package):
//
//	GET    /api/v1/cameras/{camera}/publish  publish config (JSON, bearer)
//	POST   /whip/{camera}                    SDP offer → 201 + answer + Location (bearer)
//	DELETE {Location}                        end the session (bearer)
//	GET    /api/v1/cameras/{camera}/latest   latest estimate (JSON, bearer)
//
// The token, the codec choice and autostart travel in the URL fragment
// (/publish/pendulum#token=...&codec=h264&autostart=1), which browsers never
// send to the server.
//
// The dashboard (/dashboard#token=...) is the operator's live view of every
// camera; DashboardHandler serves its page, which holds no data. It reads
// these routes, all with the bearer token (see daemon/dashboard_http.go):
//
//	GET /api/v1/dashboard                      snapshot of every camera (JSON)
//	GET /api/v1/dashboard/events               server-sent events (window, status)
//	GET /api/v1/cameras/{camera}/frame.png     the newest preprocessed frame
//	GET /api/v1/cameras/{camera}/source.png    the whole source frame, small
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed publish.html publish.js publish.css dashboard.html dashboard.js dashboard.css
var files embed.FS

// FS holds the pages' files at its root: publish.html, publish.js,
// publish.css, dashboard.html, dashboard.js and dashboard.css.
var FS fs.FS = files

// PagePrefix is the path under which Handler serves the page, one path
// segment per camera; AssetPrefix is where the page loads its script and
// stylesheet from (absolute paths, so that /publish/pendulum/ works too).
const (
	PagePrefix  = "/publish/"
	AssetPrefix = "/publish/assets/"
)

// DashboardPath is the dashboard page; DashboardAssetPrefix is where it
// loads its script and stylesheet from.
const (
	DashboardPath        = "/dashboard"
	DashboardAssetPrefix = "/dashboard/assets/"
)

// csp allows nothing but this origin: the page must not depend on, or leak
// the token to, anything else.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; media-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// dashboardCSP is csp for the dashboard: no media; images are the frames
// the script fetched with the token, shown from blob: URLs.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type asset struct {
	data  []byte
	ctype string
	etag  string
}

// assets are read once; embed.FS has no modification times, so the ETag is
// a content hash (browsers revalidate on each load: Cache-Control no-cache).
var assets = func() map[string]asset {
	m := map[string]asset{}
	for name, ctype := range map[string]string{
		"publish.html":   "text/html; charset=utf-8",
		"publish.js":     "text/javascript; charset=utf-8",
		"publish.css":    "text/css; charset=utf-8",
		"dashboard.html": "text/html; charset=utf-8",
		"dashboard.js":   "text/javascript; charset=utf-8",
		"dashboard.css":  "text/css; charset=utf-8",
	} {
		data, err := files.ReadFile(name)
		if err != nil {
			panic("web: " + err.Error()) // the embed directive guarantees the files
		}
		sum := sha256.Sum256(data)
		m[name] = asset{data, ctype, `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return m
}()

// Handler serves the publish page. It expects the full request path (mount
// it without http.StripPrefix, e.g. mux.Handle("GET /publish/", web.Handler())):
//
//	GET /publish/{camera}        publish.html, the same for every camera
//	GET /publish/assets/{file}   publish.js, publish.css
//
// Other paths get 404. HEAD and conditional requests are supported.
func Handler() http.Handler {
	return pageHandler(csp, func(path string) string {
		if file, ok := strings.CutPrefix(path, AssetPrefix); ok && (file == "publish.js" || file == "publish.css") {
			return file
		}
		if cam, ok := strings.CutPrefix(path, PagePrefix); ok && cam != "" && !strings.Contains(strings.TrimSuffix(cam, "/"), "/") {
			return "publish.html"
		}
		return ""
	})
}

// pageHandler serves the embedded file pick names for the request path
// ("" is 404) under the content security policy, to GET and HEAD only.
func pageHandler(policy string, pick func(path string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := pick(r.URL.Path)
		if name == "" {
			http.NotFound(w, r)
			return
		}
		serve(w, r, name, policy)
	})
}

// DashboardHandler serves the dashboard page, the same for every operator
// and without any data in it (the script fetches that with the token from
// the URL fragment). It expects the full request path:
//
//	GET /dashboard                 dashboard.html (also /dashboard/)
//	GET /dashboard/assets/{file}   dashboard.js, dashboard.css
//
// Other paths get 404. HEAD and conditional requests are supported.
func DashboardHandler() http.Handler {
	return pageHandler(dashboardCSP, func(path string) string {
		if file, ok := strings.CutPrefix(path, DashboardAssetPrefix); ok && (file == "dashboard.js" || file == "dashboard.css") {
			return file
		}
		if path == DashboardPath || path == DashboardPath+"/" {
			return "dashboard.html"
		}
		return ""
	})
}

// serve writes one embedded file; pages get the policy, which allows
// nothing but this origin.
func serve(w http.ResponseWriter, r *http.Request, name, policy string) {
	a := assets[name]
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if strings.HasSuffix(name, ".html") {
		h.Set("Content-Security-Policy", policy)
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.data))
}
