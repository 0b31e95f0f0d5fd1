//go:build !nocv

package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/physdtest"
	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/wire"
)

// TestAlertEvidenceFromRTSP: an RTSP camera (the pendulum's releases,
// H.264, a real server on loopback) whose alerts fire on any drift raises
// one; its message names the window's figure (PNG, with its sha256) and
// the clip being recorded; alerts.evidence.post later the evidence
// message names both with sha256 that match the files on disk and
// served by the dashboard; ffprobe reads the clip as pre + post (±1 s)
// and decodes it cleanly. After a restart under a one-day max_age the
// clip and figure are still served, and a file dated two days back is
// gone.
func TestAlertEvidenceFromRTSP(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for tens of seconds")
	}
	if raceEnabled {
		t.Skip("the race detector slows the estimator below the stream's rate")
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffprobe not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url, _ := publishReleases(ctx, t, srv)
	const pre, post = 6 * time.Second, 4 * time.Second
	cfg := testConfig()
	cfg.Cameras = []config.Camera{rtspCamera("cable", url)}
	// Any drift at all, once a baseline of one window is set, raises.
	cfg.Alerts = config.Alerts{Method: config.AlertsFixed, BaselineWindows: 1, FnDrift: 1e-9, ZetaDrift: 100, Consecutive: 1,
		Evidence: config.Evidence{Pre: pre, Post: post, MaxAge: 24 * time.Hour, MaxMB: 64, BufferMB: 16}}
	dir := t.TempDir()
	r := start(t, cfg, dir)
	c := collect(t, r.d)
	waitFor(t, 150*time.Second, "an alert and its evidence", func() bool {
		return len(c.kind(wire.KindEvidence)) > 0
	})
	alerts := c.kind(wire.KindAlert)
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want the one raised", len(alerts))
	}
	var a wire.Alert
	if err := json.Unmarshal(alerts[0].Data, &a); err != nil {
		t.Fatal(err)
	}
	var ev wire.Evidence
	if err := json.Unmarshal(c.kind(wire.KindEvidence)[0].Data, &ev); err != nil {
		t.Fatal(err)
	}
	t.Logf("alert: %s", alerts[0].Data)
	t.Logf("evidence: %s", c.kind(wire.KindEvidence)[0].Data)
	if id := alerts[0].Header.Get("Nats-Msg-Id"); ev.Alert != id || a.State != wire.AlertRaised {
		t.Errorf("evidence of alert %q, the alert's id is %q (state %s)", ev.Alert, id, a.State)
	}
	byKind := func(files []wire.EvidenceFile) map[string]wire.EvidenceFile {
		m := map[string]wire.EvidenceFile{}
		for _, f := range files {
			m[f.Kind] = f
		}
		return m
	}
	inAlert, done := byKind(a.Evidence), byKind(ev.Files)
	if f := inAlert["figure"]; f.SHA256 == "" || f.Name != done["figure"].Name || f.SHA256 != done["figure"].SHA256 {
		t.Errorf("the alert's figure %+v, the evidence's %+v", f, done["figure"])
	}
	if f := inAlert["clip"]; !f.Pending || f.Name != done["clip"].Name {
		t.Errorf("the alert's clip %+v, want pending under the name the evidence gives (%s)", f, done["clip"].Name)
	}
	clip := done["clip"]
	if clip.SHA256 == "" || !clip.Copied || clip.Codec != "video/H264" || !strings.HasSuffix(clip.Name, ".mp4") {
		t.Fatalf("the evidence's clip %+v, want an MP4 copied from the H.264 packets", clip)
	}
	sums := map[string]string{}
	for _, f := range ev.Files {
		b, err := os.ReadFile(filepath.Join(dir, "evidence", filepath.FromSlash(f.Name)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 || int64(len(b)) != f.Bytes {
			t.Errorf("%s on disk: sha256 %s, %d B; the message says %s, %d B", f.Name, got, len(b), f.SHA256, f.Bytes)
		}
		sums[f.Name] = f.SHA256
		if f.Kind == "figure" {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() <= img.Bounds().Dy() {
				t.Errorf("figure %s: %v", f.Name, err)
			}
		}
	}
	path := filepath.Join(dir, "evidence", filepath.FromSlash(clip.Name))
	dur, frames, decodeErr := probeClip(t, path)
	want := (pre + post).Seconds()
	t.Logf("clip %s: ffprobe %.3f s, %d frames (want %.0f s); span %v–%v", clip.Name, dur, frames, want, clip.Start.Format("15:04:05.000"), clip.End.Format("15:04:05.000"))
	if math.Abs(dur-want) > 1 {
		t.Errorf("clip of %.3f s, want %.0f ± 1 s", dur, want)
	}
	if math.Abs(float64(frames)-20*want) > 20 {
		t.Errorf("clip of %d frames, want %.0f ± 20 at 20 fps", frames, 20*want)
	}
	if decodeErr != "" {
		t.Errorf("the clip does not decode cleanly: %s", decodeErr)
	}
	if sp := clip.End.Sub(clip.Start).Seconds(); math.Abs(sp-want) > 1 {
		t.Errorf("clip span %.3f s, want %.0f", sp, want)
	}
	serve := func(r *running) {
		t.Helper()
		base := "http://" + r.d.HTTPAddr()
		for name, sum := range sums {
			resp, body := get(t, base+"/evidence/"+name, "")
			h := sha256.Sum256(body)
			if resp.StatusCode != 200 || hex.EncodeToString(h[:]) != sum {
				t.Errorf("GET /evidence/%s: %s, sha256 %x, want %s", name, resp.Status, h, sum)
			}
		}
		if resp, _ := get(t, base+"/evidence/cable/..%2f..%2fnats.conf", ""); resp.StatusCode == 200 {
			t.Error("a path out of the evidence directory was served")
		}
	}
	serve(r)
	var card struct {
		Cameras []struct {
			Name     string              `json:"name"`
			Evidence []wire.EvidenceFile `json:"evidence"`
		} `json:"cameras"`
	}
	_, body := get(t, "http://"+r.d.HTTPAddr()+"/api/v1/dashboard", "")
	if err := json.Unmarshal(body, &card); err != nil || len(card.Cameras) != 1 || len(card.Cameras[0].Evidence) != 2 || card.Cameras[0].Evidence[1].SHA256 != clip.SHA256 {
		t.Errorf("the dashboard's card does not link the evidence: %v %s", err, body)
	}
	r.stop()

	// A restart: retention by age at start, the alert's evidence kept.
	old := filepath.Join(dir, "evidence", "cable", "old.mp4")
	if err := os.WriteFile(old, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old, two, two); err != nil {
		t.Fatal(err)
	}
	cfg.Cameras = nil
	r2 := start(t, cfg, dir)
	serve(r2)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a file two days old survived max_age 24h: %v", err)
	}
}

// probeClip is ffprobe's duration and decoded frame count of a clip, and
// what ffmpeg prints decoding it ("" when clean).
func probeClip(t *testing.T, path string) (float64, int, string) {
	t.Helper()
	p, err := physdtest.ProbeVideo(path)
	if err != nil {
		t.Fatal(err)
	}
	return p.Duration, p.Frames, p.Errors
}
