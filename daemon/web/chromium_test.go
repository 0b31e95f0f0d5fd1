//go:build linux

package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/physd/physd/daemon/web"
	"github.com/physd/physd/internal/browser"
)

// whipRequest is what the fake server saw of one WHIP request.
type whipRequest struct {
	method, path, query, auth, ctype, body string
}

// fakeDaemon serves the page and the routes it uses, with a WHIP endpoint
// that cannot really answer: it either refuses the offer or answers with an
// unusable SDP. That is enough to check everything the page does before
// media flows, without a WebRTC stack on the server side.
type fakeDaemon struct {
	refuse bool // answer POST with 401 instead of 201

	mu   sync.Mutex
	reqs []whipRequest
}

func (f *fakeDaemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/api/v1/cameras/pendulum/publish":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"camera":"pendulum","whip":"/whip/pendulum","width":640,"height":480,"fps":30,"roi":[160,120,320,240]}`)
	case strings.HasPrefix(r.URL.Path, "/whip/pendulum"):
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, whipRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)})
		f.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && f.refuse:
			http.Error(w, "invalid token", http.StatusUnauthorized)
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/sdp")
			w.Header().Set("Location", "/whip/pendulum/s1")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, "v=0\r\nnot an answer\r\n")
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	default:
		web.Handler().ServeHTTP(w, r)
	}
}

func (f *fakeDaemon) requests() []whipRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]whipRequest(nil), f.reqs...)
}

// offeredCodecs returns the codec names of the offer's video m-line.
func offeredCodecs(sdp string) []string {
	m := regexp.MustCompile(`(?m)^m=video \S+ \S+ ([\d ]+)`).FindStringSubmatch(sdp)
	if m == nil {
		return nil
	}
	var names []string
	for _, pt := range strings.Fields(m[1]) {
		if r := regexp.MustCompile(`(?m)^a=rtpmap:` + pt + ` ([^/\s]+)`).FindStringSubmatch(sdp); r != nil {
			names = append(names, r[1])
		}
	}
	return names
}

func TestPageInChromium(t *testing.T) {
	for _, tc := range []struct {
		codec   string
		refuse  bool
		waitFor string
		want    map[string]bool // codec names allowed in the offer
	}{
		{"vp8", true, "HTTP 401 Unauthorized: invalid token", map[string]bool{"VP8": true, "rtx": true}},
		{"h264", false, "physd: stopped", map[string]bool{"H264": true, "rtx": true}},
	} {
		t.Run(tc.codec, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fake := &fakeDaemon{refuse: tc.refuse}
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			b, err := browser.Launch(ctx, browser.Options{URL: srv.URL + "/publish/pendulum#token=s3cret&codec=" + tc.codec + "&autostart=1"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("console:\n%s", strings.Join(b.Console(), "\n"))
				}
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			})
			for _, want := range []string{"physd: config ", "physd: capture ", "physd: offer codecs=", tc.waitFor} {
				if err := b.WaitConsole(ctx, want); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.refuse { // the unusable answer fails the session, which must be deleted
				if err := b.WaitConsole(ctx, "physd: delete 200"); err != nil {
					t.Fatal(err)
				}
			}
			reqs := fake.requests()
			if len(reqs) == 0 || reqs[0].method != http.MethodPost {
				t.Fatalf("WHIP requests %+v, want a POST first", reqs)
			}
			post := reqs[0]
			if post.auth != "Bearer s3cret" || post.ctype != "application/sdp" || post.query != "" {
				t.Errorf("POST auth %q, Content-Type %q, query %q; want the bearer token, application/sdp, no query", post.auth, post.ctype, post.query)
			}
			codecs := offeredCodecs(post.body)
			for _, c := range codecs {
				if !tc.want[c] {
					t.Errorf("offer has codec %s, want only %v: %q", c, tc.want, codecs)
				}
			}
			if !strings.Contains(post.body, "a=sendonly") || !strings.Contains(post.body, "a=candidate:") {
				t.Errorf("offer is not sendonly with gathered candidates:\n%s", post.body)
			}
			if !tc.refuse {
				if len(reqs) != 2 || reqs[1].method != http.MethodDelete || reqs[1].path != "/whip/pendulum/s1" || reqs[1].auth != "Bearer s3cret" {
					t.Errorf("after the failed answer: requests %+v, want DELETE /whip/pendulum/s1 with the bearer", reqs[1:])
				}
			}
		})
	}
}
