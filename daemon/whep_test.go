//go:build !nocv

package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/internal/whepserver"
	"github.com/physd/physd/sim"
)

// TestWHEPEndToEnd pulls the underdamped pendulum from a real media server
// on loopback (Janus with janus-whep-server, fed by ffmpeg over RTP) in VP8
// and in H.264: a camera of kind whep yields certified estimates within
// the estimator's accuracy on NATS.
func TestWHEPEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	y4m := pendulumY4M(ctx, t, 20)
	for _, codec := range []string{whepserver.CodecVP8, whepserver.CodecH264} {
		t.Run(codec, func(t *testing.T) {
			srv, err := whepserver.Start(ctx, whepserver.Options{Codec: codec, Video: y4m, Token: "media-token"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			cfg := testConfig()
			cfg.WebRTC.Interfaces = []string{"lo"}
			cam := config.DefaultCamera()
			cam.Name = "gantry"
			cam.Source = config.Source{Kind: config.KindWHEP, URL: config.NewSecret(srv.URL()), Token: config.NewSecret("media-token"), Timeout: 5 * time.Second}
			cfg.Cameras = []config.Camera{cam}
			r := start(t, cfg, t.TempDir())
			c := collect(t, r.d)
			waitFor(t, 60*time.Second, "certified estimates pulled over WHEP", func() bool { return len(estimates(t, c)) >= 3 })
			for _, e := range estimates(t, c) {
				t.Logf("%s: γ0 %.5f ± %.5f γ1 %.5f ± %.5f (%d frames)", codec, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Frames)
				checkAccuracy(t, codec, e, g0, g1)
			}
			if s := r.d.Statuses()["gantry"]; s.State != "online" || s.Source == "" {
				t.Errorf("status %+v, want online", s)
			}
		})
	}
}
