//go:build !nocv && linux

package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/internal/browser"
	"github.com/physd/physd/sim"
)

// TestBrowserPublishEndToEnd is the phone case for real: headless
// Chromium opens /publish/phone, its fake camera plays a y4m of the
// underdamped pendulum, the page publishes over WHIP with the codec forced
// to VP8 or H.264, and a NATS subscriber receives certified estimates
// within the estimator's accuracy; the page then shows the estimate. With
// a wrong token the page shows physd's refusal.
func TestBrowserPublishEndToEnd(t *testing.T) {
	if raceEnabled {
		t.Skip("a real-time camera in a browser: under the race detector the estimator falls behind it (the run without -race tests it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	y4m := pendulumY4M(ctx, t, 20)
	t.Run("wrong token", func(t *testing.T) {
		cfg := whipConfig(whipCamera("phone", "tok", false))
		r := start(t, cfg, t.TempDir())
		b, err := browser.Launch(ctx, browser.Options{URL: "http://" + r.d.HTTPAddr() + "/publish/phone#token=nope&autostart=1", FakeVideo: y4m})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		defer wcancel()
		if err := b.WaitConsole(wctx, "invalid bearer token"); err != nil {
			t.Errorf("the page did not show the refusal: %v\n%s", err, strings.Join(b.Console(), "\n"))
		}
		if s := r.d.Statuses()["pendulum"]; s.State != "online" {
			t.Errorf("the synthetic camera is %s after a refused publisher", s.State)
		}
	})
	for _, codec := range []string{"vp8", "h264"} {
		t.Run(codec, func(t *testing.T) {
			cfg := whipConfig(whipCamera("phone", "tok", false))
			cfg.Cameras = cfg.Cameras[1:]
			cfg.WebRTC.Addresses = []string{"127.0.0.1"}
			r := start(t, cfg, t.TempDir())
			c := collect(t, r.d)
			url := "http://" + r.d.HTTPAddr() + "/publish/phone#token=tok&codec=" + codec + "&autostart=1"
			b, err := browser.Launch(ctx, browser.Options{URL: url, FakeVideo: y4m})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			defer func() {
				if t.Failed() {
					t.Logf("page console:\n%s", strings.Join(b.Console(), "\n"))
				}
			}()
			wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
			defer wcancel()
			if err := b.WaitConsole(wctx, "physd: codec video/"+map[string]string{"vp8": "VP8", "h264": "H264"}[codec]); err != nil {
				t.Fatalf("negotiated codec: %v", err)
			}
			waitFor(t, 90*time.Second, "certified estimates from the browser", func() bool { return len(estimates(t, c)) >= 3 })
			for _, e := range estimates(t, c) {
				t.Logf("%s: γ0 %.5f ± %.5f γ1 %.5f ± %.5f (%d frames)", codec, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Frames)
				checkAccuracy(t, codec, e, g0, g1)
			}
			lctx, lcancel := context.WithTimeout(ctx, 15*time.Second)
			defer lcancel()
			if err := b.WaitConsole(lctx, `"certified":true`); err != nil {
				t.Errorf("the page did not show the certified estimate: %v", err)
			}
		})
	}
}
