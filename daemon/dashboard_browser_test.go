//go:build !nocv && linux

package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// chromiumBinary finds Chromium the way internal/browser does.
func chromiumBinary() (string, error) {
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium not installed")
}

// artifactDir is <repo root>/out/test-artifacts (out/ is gitignored); the
// repository root is the first parent of the working directory with a
// go.mod.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := physdtest.RepoRoot(t)
	out := filepath.Join(dir, "out", "test-artifacts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// dashDOM is what the test reads from the page.
type dashDOM struct {
	Href          string  `json:"href"`
	Marker        bool    `json:"marker"`
	Cards         int     `json:"cards"`
	Display       string  `json:"display"`
	Gamma0        string  `json:"gamma0"`
	Charts        string  `json:"charts"`
	Gamma0Sigma   string  `json:"gamma0_sigma"`
	Gamma1        string  `json:"gamma1"`
	Gamma1Sigma   string  `json:"gamma1_sigma"`
	G0Text        string  `json:"g0_text"`
	HistoryCount  int     `json:"history_count"`
	Certified     int     `json:"certified"`
	LatentPoints  int     `json:"latent_points"`
	SpectrumBins  int     `json:"spectrum_bins"`
	LatentPathPts int     `json:"latent_path_points"`
	FittedPoints  int     `json:"fitted_points"`
	Crossings     int     `json:"crossings"`
	Verdicts      int     `json:"verdicts"`
	VerdictText   string  `json:"verdict_text"`
	FrameWidth    int     `json:"frame_width"`
	SourceWidth   int     `json:"source_width"`
	ROIRects      int     `json:"roi_rects"`
	Conn          string  `json:"conn"`
	ScrollWidth   float64 `json:"scroll_width"`
	InnerWidth    float64 `json:"inner_width"`
	HTML          string  `json:"html"`
}

const readDOM = `(() => {
  const q = (s) => document.querySelector(s);
  const card = q('article.card[data-camera="pendulum"]');
  const g0 = card && card.querySelector(".g0");
  const g1 = card && card.querySelector(".g1");
  const lat = q("#p-latent path.lat");
  const vs = document.querySelectorAll("#d-verdicts li[data-verdict]");
  return {
    href: location.href,
    marker: window.__physdTestMarker === 1,
    cards: document.querySelectorAll("article.card").length,
    display: card ? card.dataset.display : "",
    charts: card ? [...card.querySelectorAll(".chart")].map((c) => c.dataset.quantity + ":" + c.className.split(" ")[1]).join(",") : "",
    gamma0: g0 ? g0.dataset.gamma0 || "" : "",
    gamma0_sigma: g0 ? g0.dataset.gamma0Sigma || "" : "",
    gamma1: g1 ? g1.dataset.gamma1 || "" : "",
    gamma1_sigma: g1 ? g1.dataset.gamma1Sigma || "" : "",
    g0_text: g0 ? g0.textContent : "",
    history_count: Number(q("#p-g0").dataset.count || 0),
    certified: Number(q("#p-g0").dataset.certified || 0),
    latent_points: Number(q("#p-latent").dataset.latentPoints || 0),
    spectrum_bins: Number(q("#p-spectrum").dataset.bins || 0),
    latent_path_points: lat ? (lat.getAttribute("d").match(/[ML]/g) || []).length : 0,
    fitted_points: Number(q("#p-latent").dataset.fittedPoints || 0),
    crossings: document.querySelectorAll("#p-latent circle.cross").length,
    verdicts: vs.length,
    verdict_text: vs.length ? vs[0].textContent : "",
    frame_width: q("#d-frame").naturalWidth || 0,
    source_width: q("#d-source").naturalWidth || 0,
    roi_rects: document.querySelectorAll("#d-roi rect.roi-rect").length,
    conn: q("#conn").dataset.conn,
    scroll_width: document.scrollingElement.scrollWidth,
    inner_width: window.innerWidth,
    html: document.documentElement.outerHTML,
  };
})()`

// TestDashboardBrowser opens the dashboard in headless Chromium against a
// running physd with the synthetic pendulum, an http.token, a whip camera
// with its own token and an RTSP camera with a password in its URL. The
// page takes the token from the fragment, shows the cameras, receives
// windows live (the history plot grows without a reload), draws the
// latent with the fitted solution and the level crossings, shows a
// certified estimate within the estimator's accuracy, the verdicts and the
// frames, fits a phone's width, and never shows a secret.
func TestDashboardBrowser(t *testing.T) {
	bin, err := chromiumBinary()
	if err != nil {
		t.Skip(err)
	}
	if raceEnabled {
		t.Skip("real-time cameras: under the race detector the estimator falls behind them and the page's windows are skipped (the run without -race tests it)")
	}
	if testing.Short() {
		t.Skip("runs the daemon and a browser")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := start(t, dashboardConfig(), t.TempDir())
	url := "http://" + r.d.HTTPAddr() + "/dashboard#token=" + dashHTTPToken

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	page := listenPage(bctx)
	defer page.check(t)

	// The first Run starts the browser and ties it to the context it is
	// given: bctx itself, not one of the per-step timeouts below.
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	run := func(what string, timeout time.Duration, actions ...chromedp.Action) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, timeout)
		defer cancel()
		if err := chromedp.Run(c, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	read := func() dashDOM {
		t.Helper()
		var d dashDOM
		run("read the page", 10*time.Second, chromedp.Evaluate(readDOM, &d))
		return d
	}
	// poll reads the page until cond holds.
	poll := func(what string, timeout time.Duration, cond func(dashDOM) bool) dashDOM {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			d := read()
			if cond(d) {
				return d
			}
			if time.Now().After(deadline) {
				d.HTML = fmt.Sprintf("%d bytes", len(d.HTML))
				t.Fatalf("timed out after %v waiting for %s; page: %+v", timeout, what, d)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	began := time.Now()
	run("open the dashboard", 30*time.Second, chromedp.Navigate(url),
		chromedp.WaitVisible(`article.card[data-camera="pendulum"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.__physdTestMarker = 1`, nil))
	d := read()
	t.Logf("dashboard up after %v: %d cards, pendulum %s, stream %s", time.Since(began).Round(time.Millisecond), d.Cards, d.Display, d.Conn)
	if strings.Contains(d.Href, "token") {
		t.Errorf("the token stayed in the address bar: %s", d.Href)
	}
	if d.Cards < 2 || d.Display == "" {
		t.Errorf("cards: %d, pendulum state %q", d.Cards, d.Display)
	}

	// A certified estimate arrives over the event stream (the page is
	// never reloaded: the marker survives).
	d = poll("a certified estimate on the pendulum's card", 60*time.Second, func(d dashDOM) bool {
		return d.Gamma0 != "" && d.Certified > 0 && d.LatentPoints > 0
	})
	t.Logf("certified estimate after %v: card %q, state %s, %d windows in the history", time.Since(began).Round(time.Millisecond), d.G0Text, d.Display, d.HistoryCount)
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	var e wire.Estimate
	if _, err := fmt.Sscan(d.Gamma0+" "+d.Gamma0Sigma+" "+d.Gamma1+" "+d.Gamma1Sigma, &e.Gamma0, &e.Gamma0Sigma, &e.Gamma1, &e.Gamma1Sigma); err != nil {
		t.Fatalf("estimate on the page: %v (%+v)", err, d)
	}
	t.Logf("page shows γ0 %.5f ± %.5f γ1 %.5f ± %.5f (truth %.4f, %.2f); alert charts %s", e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, g0, g1, d.Charts)
	// The alerts' charts (the default config's): learning their baseline.
	if d.Charts != "fn_hz:learning,zeta:learning" {
		t.Errorf("the card's alert charts read %q, want fn_hz and zeta learning", d.Charts)
	}
	if math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > 0.004 {
		t.Errorf("the page's estimate γ0 %.5f γ1 %.5f is outside the accuracy bar around (%.4f, %.2f)", e.Gamma0, e.Gamma1, g0, g1)
	}
	checkAccuracy(t, "dashboard", &e, g0, g1)
	if d.Display != "certified" && d.Display != "training" {
		t.Errorf("pendulum's state %q after a certified window", d.Display)
	}

	// Live: the history grows between two reads without a reload.
	before := d.HistoryCount
	d = poll("the history plot to grow", 15*time.Second, func(d dashDOM) bool { return d.HistoryCount > before })
	if !d.Marker {
		t.Error("the page was reloaded")
	}
	t.Logf("history plot: %d → %d windows (%d certified)", before, d.HistoryCount, d.Certified)

	// The last window's plots, the verdicts and the frames.
	d = poll("the frames to load", 10*time.Second, func(d dashDOM) bool { return d.FrameWidth > 0 && d.SourceWidth > 0 })
	t.Logf("latent: %d points (path %d), fitted %d, %d crossings; frame %d px, source %d px, %d ROI rect(s); first verdict %q",
		d.LatentPoints, d.LatentPathPts, d.FittedPoints, d.Crossings, d.FrameWidth, d.SourceWidth, d.ROIRects, d.VerdictText)
	// A window's frames: 95 at the pendulum's 20 fps, 48 once windows.bin:
	// auto has binned them by 2 (after the first certificate).
	if d.SpectrumBins < 20 {
		t.Errorf("spectrum plot: %d bins", d.SpectrumBins)
	}
	if d.LatentPoints < 45 || d.LatentPathPts < 45 || d.FittedPoints < 45 || d.Crossings == 0 {
		t.Errorf("latent plot: %d points (path %d), fitted %d, %d crossings", d.LatentPoints, d.LatentPathPts, d.FittedPoints, d.Crossings)
	}
	// A window the estimator fell behind on is listed as skipped: on a
	// loaded machine the newest entry may be one.
	if d.Verdicts == 0 || !(strings.Contains(d.VerdictText, "certified") || strings.HasPrefix(d.VerdictText, "skipped")) {
		t.Errorf("verdict list: %d entries, first %q", d.Verdicts, d.VerdictText)
	}
	if d.FrameWidth != 64 || d.ROIRects != 1 {
		t.Errorf("frame %d px wide, %d ROI rectangles", d.FrameWidth, d.ROIRects)
	}
	if d.ScrollWidth > d.InnerWidth {
		t.Errorf("desktop: page %v px wide in a %v px window", d.ScrollWidth, d.InnerWidth)
	}
	assertNoSecrets(t, "the page", []byte(d.HTML+d.Href))

	dir := artifactDir(t)
	var shot []byte
	run("desktop screenshot", 20*time.Second, chromedp.FullScreenshot(&shot, 100))
	desktop := filepath.Join(dir, "dashboard-desktop.png")
	if err := os.WriteFile(desktop, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", desktop)

	// A phone: 390×844 CSS pixels, nothing wider than the screen.
	run("phone viewport", 10*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	time.Sleep(time.Second) // the page redraws its plots 150 ms after a resize
	d = poll("the phone layout", 10*time.Second, func(d dashDOM) bool { return d.InnerWidth <= 400 })
	if d.ScrollWidth > d.InnerWidth {
		t.Errorf("phone: page %v px wide in a %v px viewport (horizontal overflow)", d.ScrollWidth, d.InnerWidth)
	}
	var widest float64
	run("plot widths", 10*time.Second, chromedp.Evaluate(`Math.max(...[...document.querySelectorAll("svg.plot, article.card, img")].map((e) => e.getBoundingClientRect().right))`, &widest))
	if widest > d.InnerWidth+0.5 {
		t.Errorf("phone: an element reaches %v px in a %v px viewport", widest, d.InnerWidth)
	}
	run("phone screenshot", 20*time.Second, chromedp.FullScreenshot(&shot, 100))
	phone := filepath.Join(dir, "dashboard-phone.png")
	if err := os.WriteFile(phone, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (phone %v×844, page %v px wide); test took %v", phone, d.InnerWidth, d.ScrollWidth, time.Since(began).Round(time.Millisecond))
	assertNoSecrets(t, "the page", []byte(d.HTML+d.Href))
}
