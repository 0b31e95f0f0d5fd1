package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/physd/physd/config"
)

const rateMetric = `physd_http_rejected_total{reason="rate_limit"}`

// rateConfig is the test configuration without cameras (less CPU beside
// the timed requests) and with the given limit.
func rateConfig(perSecond float64, burst int) *config.Config {
	cfg := testConfig()
	cfg.Cameras = []config.Camera{}
	cfg.HTTP.RateLimit, cfg.HTTP.RateBurst = perSecond, burst
	return cfg
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.2, …: Linux routes all of 127/8 to lo), a client
// distinct from http.DefaultClient's 127.0.0.1 to the rate limiter.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// reply is a response read whole.
type reply struct {
	code   int
	header http.Header
	body   string
}

// call sends one request with client and reads the whole response.
func call(t *testing.T, client *http.Client, method, url, token string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			t.Skipf("a second loopback source address does not work here: %v", err)
		}
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// check429 checks a refusal: Retry-After in whole seconds ≥ 1, and a
// plain-text message as httpError writes; it returns Retry-After.
func check429(t *testing.T, what string, r reply) int {
	t.Helper()
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds ≥ 1", what, r.header.Get("Retry-After"))
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") || !strings.Contains(r.body, "too many requests") ||
		!strings.Contains(r.body, "retry in") {
		t.Errorf("%s: Content-Type %q, body %q", what, r.header.Get("Content-Type"), r.body)
	}
	return secs
}

// TestRateLimitPerClient floods /healthz from 127.0.0.2 at a limit of
// 5/s with bursts of 5: the burst passes, then 429 with Retry-After; the
// rejection counter grows by exactly the number of 429s; 127.0.0.1 is not
// affected; after Retry-After the client passes again. An event stream
// opened from 127.0.0.3 counts once: while it stays open the client's
// bucket refills.
func TestRateLimitPerClient(t *testing.T) {
	r := start(t, rateConfig(5, 5), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	before := scrape(t, base) // from 127.0.0.1
	if v, ok := before[rateMetric]; !ok || v != 0 {
		t.Fatalf("%s before any refusal: %v (present %v), want 0", rateMetric, v, ok)
	}
	flooder := clientFrom(t, "127.0.0.2")
	var codes []int
	passed, limited, wait := 0, 0, 0
	t0 := time.Now()
	for i := range 20 {
		rep := call(t, flooder, http.MethodGet, base+"/healthz", "")
		codes = append(codes, rep.code)
		switch rep.code {
		case http.StatusOK:
			passed++
		case http.StatusTooManyRequests:
			limited++
			wait = max(wait, check429(t, fmt.Sprintf("request %d", i), rep))
		default:
			t.Fatalf("request %d: %d %q", i, rep.code, rep.body)
		}
	}
	elapsed := time.Since(t0)
	t.Logf("20 requests from 127.0.0.2 in %v: %d × 200, %d × 429 (Retry-After %d s): %v", elapsed.Round(time.Millisecond), passed, limited, wait, codes)
	for i, c := range codes[:5] {
		if c != http.StatusOK {
			t.Errorf("request %d of the burst: %d, want 200", i, c)
		}
	}
	// 5 at once, then 5 a second (one more for a token that was nearly
	// there).
	if most := 5 + int(5*elapsed.Seconds()) + 1; limited == 0 || passed > most {
		t.Errorf("%d passed and %d refused in %v, want 5 to %d passed and the rest refused", passed, limited, elapsed, most)
	}
	if wait != 1 {
		t.Errorf("Retry-After %d s at 5 requests a second, want 1", wait)
	}

	// Another address is not affected, and the counter moved by the 429s.
	if rep := call(t, http.DefaultClient, http.MethodGet, base+"/healthz", ""); rep.code != http.StatusOK {
		t.Errorf("127.0.0.1 right after 127.0.0.2's flood: %d %q", rep.code, rep.body)
	}
	after := scrape(t, base)
	if got := after[rateMetric] - before[rateMetric]; got != float64(limited) {
		t.Errorf("%s grew by %v, want %d (the 429s)", rateMetric, got, limited)
	}

	// After Retry-After the flooder passes again.
	time.Sleep(time.Duration(wait) * time.Second)
	if rep := call(t, flooder, http.MethodGet, base+"/healthz", ""); rep.code != http.StatusOK {
		t.Errorf("127.0.0.2 %d s after its 429: %d %q", wait, rep.code, rep.body)
	}

	// An event stream takes one token when it opens and none while open.
	streamer := clientFrom(t, "127.0.0.3")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/dashboard/events", nil)
	resp, err := streamer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %s", resp.Status)
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- name
			}
		}
	}()
	drain := func(n int) (int, time.Duration) {
		t0 := time.Now()
		for i := range n {
			if rep := call(t, streamer, http.MethodGet, base+"/healthz", ""); rep.code != http.StatusOK {
				return i, time.Since(t0)
			}
		}
		return n, time.Since(t0)
	}
	// The stream took 1 of 5 tokens: 4 more pass (or a few more if the
	// requests were slow), then 429.
	n, took := drain(10)
	t.Logf("event stream open from 127.0.0.3: %d more requests passed in %v, then 429", n, took.Round(time.Millisecond))
	if most := 4 + int(5*took.Seconds()) + 1; n < 4 || n > most {
		t.Errorf("after opening the stream %d requests passed in %v, want 4 to %d", n, took, most)
	}
	// The stream outlives the refusals, and while it stays open the bucket
	// refills: after the next status event (every 2 s) the whole burst
	// passes again.
	status := false
	for name := range events {
		if status = name == "status"; status {
			break
		}
	}
	if !status {
		t.Fatalf("the event stream ended before a status event (%v)", ctx.Err())
	}
	if n, _ := drain(5); n != 5 {
		t.Errorf("with the stream open for 2 s, %d of 5 requests passed, want 5 (a stream counts once)", n)
	}
}

// TestRateLimitBeforeAuth floods /metrics with a wrong token: the burst
// gets 401, the rest 429 before the token is looked at, and the operator
// (another address, with the token) still scrapes and sees them counted.
func TestRateLimitBeforeAuth(t *testing.T) {
	cfg := rateConfig(5, 5)
	cfg.HTTP.Token = config.NewSecret("operator-token")
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	flooder := clientFrom(t, "127.0.0.2")
	var codes []int
	limited := 0
	for i := range 12 {
		rep := call(t, flooder, http.MethodGet, base+"/metrics", "wrong-token")
		codes = append(codes, rep.code)
		switch {
		case i < 5 && rep.code != http.StatusUnauthorized:
			t.Errorf("request %d: %d, want 401 (within the burst)", i, rep.code)
		case rep.code == http.StatusTooManyRequests:
			limited++
			check429(t, fmt.Sprintf("request %d", i), rep)
		case rep.code != http.StatusUnauthorized:
			t.Errorf("request %d: %d %q", i, rep.code, rep.body)
		}
	}
	t.Logf("12 bad-token requests: %v", codes)
	if limited == 0 {
		t.Fatal("no request with a bad token was rate limited")
	}
	rep := call(t, http.DefaultClient, http.MethodGet, base+"/metrics", "operator-token")
	if rep.code != http.StatusOK {
		t.Fatalf("operator's scrape: %d", rep.code)
	}
	if want := fmt.Sprintf("%s %d\n", rateMetric, limited); !strings.Contains(rep.body, want) {
		t.Errorf("/metrics lacks %q", want)
	}
}

// TestRateLimitDisabled: with rate_limit 0 a burst of 60 requests all
// pass and nothing is counted.
func TestRateLimitDisabled(t *testing.T) {
	r := start(t, rateConfig(0, 0), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	client := clientFrom(t, "127.0.0.2")
	for i := range 60 {
		if rep := call(t, client, http.MethodGet, base+"/healthz", ""); rep.code != http.StatusOK {
			t.Fatalf("request %d with rate_limit 0: %d %q", i, rep.code, rep.body)
		}
	}
	if v := scrape(t, base)[rateMetric]; v != 0 {
		t.Errorf("%s = %v with rate_limit 0", rateMetric, v)
	}
}

// fakeClock is a settable clock for the limiter.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func testLimiter(perSecond float64, burst, maxClients int) (*rateLimiter, *fakeClock) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newRateLimiter(perSecond, burst, nil, nil)
	l.now, l.max = clk.now, maxClients
	return l, clk
}

func ip(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
}

// TestRateLimiterBoundAndEviction: the client map never exceeds its bound
// however many addresses arrive; when full of active clients the least
// recently seen goes; idle clients are swept when a new one arrives after
// the sweep period; an active client survives the sweep with its bucket.
func TestRateLimiterBoundAndEviction(t *testing.T) {
	const most = 4
	l, clk := testLimiter(1, 2, most)
	if l.idle != rateIdle {
		t.Fatalf("idle %v, want %v", l.idle, rateIdle)
	}
	for i := range 4 {
		if !l.allow(ip(i)).ok {
			t.Fatalf("client %d refused its first request", i)
		}
		clk.advance(time.Second)
	}
	// Full: the next client replaces the least recently seen (0).
	l.allow(ip(100))
	if l.size() != most {
		t.Fatalf("%d clients, bound %d", l.size(), most)
	}
	l.mu.Lock()
	_, has0 := l.clients[ip(0)]
	_, has1 := l.clients[ip(1)]
	l.mu.Unlock()
	if has0 || !has1 {
		t.Errorf("after overflow: client 0 kept %v, client 1 kept %v; want 0 evicted (least recently seen), 1 kept", has0, has1)
	}
	// A flood from many addresses stays within the bound.
	for i := range 10000 {
		l.allow(ip(1000 + i))
		if l.size() > most {
			t.Fatalf("%d clients after %d new ones, bound %d", l.size(), i+1, most)
		}
	}

	// Idle eviction: a client seen every minute stays; the others are
	// forgotten once idle for rateIdle, at the first arrival after a sweep
	// is due.
	l, clk = testLimiter(1, 2, rateMaxClients)
	active := ip(1)
	for i := range 3 {
		l.allow(ip(10 + i))
	}
	for range 2 {
		l.allow(active)
	}
	if l.allow(active).ok {
		t.Fatal("third request of a burst of 2 passed")
	}
	for range 3 {
		clk.advance(time.Minute)
		l.allow(active) // refills; keeps it seen
	}
	clk.advance(time.Second)
	l.allow(ip(99)) // a newcomer triggers the sweep
	l.mu.Lock()
	var kept []string
	for k := range l.clients {
		kept = append(kept, clientName(k))
	}
	l.mu.Unlock()
	if l.size() != 2 {
		t.Errorf("after 3 min idle, tracked %v, want only the active client 10.0.0.1 and the newcomer 10.0.0.99", kept)
	}

	// A slow limit keeps idle clients until their bucket is full again:
	// forgetting one must not give it more than the limit.
	if l, _ := testLimiter(0.01, 10, 10); l.idle != 1000*time.Second {
		t.Errorf("idle at 0.01/s burst 10: %v, want 1000s (the refill time)", l.idle)
	}
}

// TestRateLimiterRetryAfter checks the wait a refused client is told and
// that it is enough.
func TestRateLimiterRetryAfter(t *testing.T) {
	l, clk := testLimiter(0.5, 1, 10)
	c := ip(1)
	if !l.allow(c).ok {
		t.Fatal("first request refused")
	}
	d := l.allow(c)
	if d.ok || d.wait != 2*time.Second || retryAfter(d.wait) != 2 {
		t.Fatalf("second request at 0.5/s: %+v, want refused with a wait of 2 s", d)
	}
	clk.advance(1500 * time.Millisecond)
	if d := l.allow(c); d.ok || retryAfter(d.wait) != 1 {
		t.Errorf("1.5 s later: %+v, Retry-After %d, want refused, 1", d, retryAfter(d.wait))
	}
	clk.advance(500 * time.Millisecond)
	if d := l.allow(c); !d.ok {
		t.Errorf("after the wait: %+v, want allowed", d)
	}
	// Refusals report to the log at most once per rateLogEvery, with the
	// count since the last report (a token every 100 s: all refused).
	l, clk = testLimiter(0.01, 1, 10)
	l.allow(c)
	var reports []int
	for range 30 { // 30 refusals over 3 s, then one 10 s later
		if d := l.allow(c); d.report > 0 {
			reports = append(reports, d.report)
		}
		clk.advance(100 * time.Millisecond)
	}
	clk.advance(rateLogEvery)
	if d := l.allow(c); d.ok || d.report != 30 {
		t.Errorf("refusal %v after the last report: %+v, want refused, reporting 30", rateLogEvery, d)
	}
	if len(reports) != 1 || reports[0] != 1 {
		t.Errorf("log reports %v over 3 s of refusals, want one, of 1", reports)
	}
	for _, tc := range []struct {
		wait time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {time.Minute, 60}} {
		if got := retryAfter(tc.wait); got != tc.want {
			t.Errorf("retryAfter(%v) = %d, want %d", tc.wait, got, tc.want)
		}
	}
}

// TestRateLimitClientKey: IPv4 and IPv4-mapped by address, IPv6 by /64,
// anything else shares one key.
func TestRateLimitClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5000":                   "192.0.2.7",
		"[::ffff:192.0.2.7]:5000":          "192.0.2.7",
		"[2001:db8:1:2:aaaa::1]:443":       "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb::9]:443":       "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":                "fe80::/64",
		"127.0.0.2:1":                      "127.0.0.2",
		"@":                                "unknown",
		"":                                 "unknown",
		"not an address":                   "unknown",
		"[2001:db8:1:3::1]:443":            "2001:db8:1:3::/64",
		"[::1]:8090":                       "::/64",
		"203.0.113.9:65535":                "203.0.113.9",
		"[2001:db8:ffff:ffff:ffff::]:1234": "2001:db8:ffff:ffff::/64",
	} {
		if got := clientName(clientKey(addr)); got != want {
			t.Errorf("clientKey(%q) = %s, want %s", addr, got, want)
		}
	}
}

// TestRateLimitHandler runs the middleware without a daemon: the 429's
// headers (CORS on WHIP routes, for a publisher page on another origin),
// the counter, and X-Forwarded-For ignored.
func TestRateLimitHandler(t *testing.T) {
	counter := &countingCounter{Counter: prometheus.NewCounter(prometheus.CounterOpts{Name: "t"})}
	l := newRateLimiter(1, 1, nil, counter)
	h := l.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	do := func(path, remote, xff string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.RemoteAddr = remote
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := do("/whip/phone", "198.51.100.1:1000", ""); w.Code != http.StatusNoContent {
		t.Fatalf("first request: %d", w.Code)
	}
	// Another port, a forged X-Forwarded-For: the same client.
	w := do("/whip/phone", "198.51.100.1:1001", "203.0.113.5")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" ||
		w.Header().Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("second request: %d %v", w.Code, w.Header())
	}
	if got := w.Body.String(); got != "too many requests from your address: the limit is 1 a second (bursts of 1); retry in 1 s\n" {
		t.Errorf("body %q", got)
	}
	if w := do("/metrics", "198.51.100.1:1002", ""); w.Code != http.StatusTooManyRequests || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("/metrics over the limit: %d, CORS %q (only WHIP routes are cross-origin)", w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	}
	if w := do("/metrics", "198.51.100.2:1000", ""); w.Code != http.StatusNoContent {
		t.Errorf("another client: %d", w.Code)
	}
	if counter.n != 2 {
		t.Errorf("counter %v, want 2", counter.n)
	}
}

// countingCounter is a prometheus.Counter that counts Inc calls.
type countingCounter struct {
	prometheus.Counter
	n int
}

func (c *countingCounter) Inc() { c.n++; c.Counter.Inc() }

// TestHTTPRequestSizeLimits: a request's headers over maxHeader get 431
// and a body declared over maxBody gets 413 before any handler, on a real
// daemon; readBody and limitBodies refuse a body over maxBody however it
// is sent (declared or chunked), and accept one of exactly maxBody.
func TestHTTPRequestSizeLimits(t *testing.T) {
	r := start(t, rateConfig(0, 0), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	send := func(method, path string, header http.Header, body string) reply {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(req.Header, header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return reply{resp.StatusCode, resp.Header, string(b)}
	}
	if rep := send(http.MethodGet, "/healthz", http.Header{"X-Filler": {strings.Repeat("a", 8<<10)}}, ""); rep.code != http.StatusOK {
		t.Errorf("8 KiB of headers: %d, want 200", rep.code)
	}
	if rep := send(http.MethodGet, "/healthz", http.Header{"X-Filler": {strings.Repeat("a", 2*maxHeader)}}, ""); rep.code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("%d KiB of headers: %d %q, want 431", 2*maxHeader>>10, rep.code, rep.body)
	}
	for _, path := range []string{"/whip/phone", "/healthz"} {
		rep := send(http.MethodPost, path, http.Header{"Content-Type": {"application/sdp"}}, strings.Repeat("a", 1<<20))
		if rep.code != http.StatusRequestEntityTooLarge || rep.body != "request body over 65536 bytes (64 KiB), the most physd accepts\n" {
			t.Errorf("POST %s of 1 MiB: %d %q, want 413", path, rep.code, rep.body)
		}
	}
	// Up to the limit the route decides (here: no such camera).
	if rep := send(http.MethodPost, "/whip/nosuch", http.Header{"Content-Type": {"application/sdp"}}, strings.Repeat("a", maxBody)); rep.code != http.StatusNotFound {
		t.Errorf("POST of exactly %d bytes: %d %q, want 404 (not a size refusal)", maxBody, rep.code, rep.body)
	}

	read := func(body io.Reader, length int64) (*httptest.ResponseRecorder, []byte, bool) {
		req := httptest.NewRequest(http.MethodPatch, "/whip/phone/s1", body)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		w := httptest.NewRecorder()
		var got []byte
		var ok bool
		limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, ok = readBody(w, r, "application/trickle-ice-sdpfrag")
		})).ServeHTTP(w, req)
		return w, got, ok
	}
	// Chunked (length unknown): read up to the limit, then refused.
	w, _, ok := read(strings.NewReader(strings.Repeat("a", maxBody+1)), -1)
	if ok || w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "over 65536 bytes") {
		t.Errorf("chunked body of maxBody+1: %d %q", w.Code, w.Body.String())
	}
	// Declared too long: refused without reading.
	var untouched countingReader
	if w, _, ok := read(&untouched, maxBody+1); ok || w.Code != http.StatusRequestEntityTooLarge || untouched.n != 0 {
		t.Errorf("declared maxBody+1: %d, %d bytes read", w.Code, untouched.n)
	}
	if w, got, ok := read(strings.NewReader(strings.Repeat("a", maxBody)), -1); !ok || len(got) != maxBody {
		t.Errorf("body of exactly maxBody: %d, %d bytes, ok %v", w.Code, len(got), ok)
	}
	// A handler that reads the body itself is capped too.
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("a", 2*maxBody)))
	req.ContentLength = -1
	var readErr error
	limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, readErr = io.ReadAll(r.Body)
	})).ServeHTTP(httptest.NewRecorder(), req)
	var tooBig *http.MaxBytesError
	if !errors.As(readErr, &tooBig) {
		t.Errorf("a handler reading 2×maxBody: %v, want *http.MaxBytesError", readErr)
	}
}

// countingReader is an endless body that counts the bytes read from it.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
