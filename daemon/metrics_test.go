package daemon

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/config"
)

// scrape reads /metrics into "name{labels}" → value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetricsMoveWithFramesAndWindows scrapes /metrics from a daemon with
// the default synthetic camera twice, a few windows apart: the frame,
// window and training counters grow, the latest estimate's gauges hold a
// certified (γ0, γ1) within the estimator's accuracy, NATS is connected
// with nothing lost, and Go's runtime metrics are there.
func TestMetricsMoveWithFramesAndWindows(t *testing.T) {
	r := start(t, testConfig(), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	cam := r.d.cfg.Cameras[0].Name
	lbl := `{camera="` + cam + `"}`
	certified := `physd_windows_total{camera="` + cam + `",verdict="certified"}`

	var first map[string]float64
	deadline := time.Now().Add(60 * time.Second)
	for first == nil || first[certified] < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no certified window counted in 60 s; last scrape: %v", first)
		}
		time.Sleep(500 * time.Millisecond)
		first = scrape(t, base)
	}
	var second map[string]float64
	for second == nil || second[certified] < first[certified]+2 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("certified windows stayed at %v", second[certified])
		}
		time.Sleep(500 * time.Millisecond)
		second = scrape(t, base)
	}
	for _, name := range []string{"physd_frames_received_total" + lbl, certified, "physd_training_seconds_count" + lbl, "physd_training_seconds_sum" + lbl} {
		if !(second[name] > first[name]) {
			t.Errorf("%s did not grow: %v → %v", name, first[name], second[name])
		}
	}
	// The learning stage's time by step grows with the windows; the
	// time the training histogram sums (the learner's whole call) is the
	// train, fit and certify steps'.
	stage := func(st string) float64 { return second[`physd_stage_seconds_total{camera="`+cam+`",stage="`+st+`"}`] }
	for _, st := range []string{"motion", "train", "fit", "certify", "weigh"} { // a synthetic camera neither decodes nor preprocesses
		name := `physd_stage_seconds_total{camera="` + cam + `",stage="` + st + `"}`
		if !(second[name] > first[name]) {
			t.Errorf("%s did not grow: %v → %v", name, first[name], second[name])
		}
	}
	if tr, h := stage("train")+stage("fit")+stage("certify"), second["physd_training_seconds_sum"+lbl]; math.Abs(tr-h) > 0.1*h+0.05 {
		t.Errorf("train, fit and certify stages %.3f s, training histogram %.3f s", tr, h)
	}
	if second["physd_cold_starts_total"+lbl] < 1 {
		t.Errorf("cold starts %v: the first window starts cold", second["physd_cold_starts_total"+lbl])
	}
	// 20 fps: between the scrapes at least one frame per 100 ms arrived.
	if second["physd_frames_received_total"+lbl] < 20*(second[certified]-first[certified]-1) {
		t.Errorf("frames %v → %v over %v certified windows", first["physd_frames_received_total"+lbl], second["physd_frames_received_total"+lbl], second[certified]-first[certified])
	}
	g0, g1 := second["physd_gamma0"+lbl], second["physd_gamma1"+lbl]
	if math.Abs(g0-4.0016) > 0.005*4.0016 || math.Abs(g1-0.08) > 0.004 {
		t.Errorf("latest estimate gauges γ0 %v γ1 %v, want (4.0016, 0.08) within the accuracy bar", g0, g1)
	}
	if fn := second["physd_natural_frequency_hz"+lbl]; math.Abs(fn-math.Sqrt(g0)/(2*math.Pi)) > 1e-9 {
		t.Errorf("f_n %v, want √γ0/2π = %v", fn, math.Sqrt(g0)/(2*math.Pi))
	}
	if z := second["physd_damping_ratio"+lbl]; math.Abs(z-g1/(2*math.Sqrt(g0))) > 1e-9 {
		t.Errorf("ζ %v, want γ1/(2√γ0)", z)
	}
	if second["physd_nats_connected"] != 1 || second["physd_nats_publish_errors_total"] != 0 {
		t.Errorf("NATS connected %v, publish errors %v", second["physd_nats_connected"], second["physd_nats_publish_errors_total"])
	}
	if second[`physd_camera_state{camera="`+cam+`",state="online"}`] != 1 {
		t.Errorf("camera state gauge: %v", second)
	}
	if second["go_goroutines"] < 5 || second["process_resident_memory_bytes"] <= 0 {
		t.Errorf("runtime metrics: go_goroutines %v, process_resident_memory_bytes %v", second["go_goroutines"], second["process_resident_memory_bytes"])
	}
}

// TestHealthAndReadiness checks the JSON of /healthz and /readyz.
func TestHealthAndReadiness(t *testing.T) {
	r := start(t, testConfig(), t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	get := func(path string, v any) int {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v in %q", path, err, b)
		}
		return resp.StatusCode
	}
	var h Health
	if code := get("/healthz", &h); code != http.StatusOK || h.Status != "ok" || !(h.Uptime > 0) {
		t.Errorf("/healthz: %d %+v", code, h)
	}
	var rd Readiness
	if code := get("/readyz", &rd); code != http.StatusOK || !rd.Ready || !rd.NATS.Connected || len(rd.Cameras) != 1 || len(rd.Reasons) != 0 {
		t.Errorf("/readyz: %d %+v", code, rd)
	}
	// NATS gone: not ready, with the reason.
	r.d.mu.Lock()
	nc := r.d.bus.nc
	r.d.mu.Unlock()
	nc.Close()
	rd = Readiness{}
	if code := get("/readyz", &rd); code != http.StatusServiceUnavailable || rd.Ready || rd.NATS.Connected || len(rd.Reasons) != 1 {
		t.Errorf("/readyz without NATS: %d %+v", code, rd)
	}
}

// TestOperatorEndpointsNeedTheToken: with http.token set, /metrics and
// /readyz answer 401 without it and with a wrong one, 200 with it, and
// the metrics never contain the token; /healthz stays open for probes.
func TestOperatorEndpointsNeedTheToken(t *testing.T) {
	cfg := testConfig()
	cfg.HTTP.Token = config.NewSecret("s3cret-operator-token")
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	do := func(path, tok string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/readyz"} {
		if code, _ := do(path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d, want 401", path, code)
		}
		if code, _ := do(path, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
		code, body := do(path, "s3cret-operator-token")
		if code != http.StatusOK {
			t.Errorf("%s with the token: %d", path, code)
		}
		if strings.Contains(body, "s3cret") {
			t.Errorf("%s exposes the token", path)
		}
	}
	if code, _ := do("/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz without a token: %d, want 200 (liveness probes carry no token)", code)
	}
}
