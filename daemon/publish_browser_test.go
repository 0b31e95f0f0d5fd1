//go:build !nocv && linux

package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserPublishTokenEntered opens the publish page without a token in
// its URL, as a person does: the page cannot load the camera's publish
// config (physd wants the token for it) and asks for the token; a wrong
// one entered shows physd's refusal; the right one loads the config,
// opens the camera and publishes until the connection is up; Stop ends the
// session with the token.
func TestBrowserPublishTokenEntered(t *testing.T) {
	bin, err := chromiumBinary()
	if err != nil {
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip("runs the daemon and a browser")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := whipConfig(whipCamera("phone", "tok", false))
	cfg.Cameras = cfg.Cameras[1:]
	cfg.WebRTC.Addresses = []string{"127.0.0.1"}
	r := start(t, cfg, t.TempDir())
	url := "http://" + r.d.HTTPAddr() + "/publish/phone"

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	page := listenPage(bctx)
	defer page.check(t)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Run(c, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return s
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; status %q", what, text("#status"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	enter := func(token string) {
		t.Helper()
		run("enter the token and press Start",
			chromedp.SetValue("#token", token, chromedp.ByQuery),
			chromedp.Click("#toggle", chromedp.ByQuery))
	}

	run("open the page", chromedp.Navigate(url), chromedp.WaitVisible("#toggle", chromedp.ByQuery))
	wait("the page to ask for the token", func() bool { return strings.Contains(text("#status"), "Enter the publish token") })
	if page.logged("physd: config") {
		t.Error("the page loaded the publish config without a token")
	}
	enter("nope")
	wait("physd's refusal", func() bool { return strings.Contains(text("#status"), "invalid bearer token") })
	enter("tok")
	wait("the publish config", func() bool { return page.logged("physd: config") })
	wait("the WHIP session", func() bool { return page.logged("physd: whip 201") })
	wait("the connection", func() bool { return text("#conn") == "connected" })
	run("stop", chromedp.Click("#toggle", chromedp.ByQuery))
	// The page closes its connection and sends DELETE with the token:
	// 200, or 404 when physd saw the connection close first.
	wait("the DELETE", func() bool { return page.logged("physd: delete ") })
	if page.logged("physd: delete 401") {
		t.Error("physd refused the page's DELETE")
	}
}
