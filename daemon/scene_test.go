//go:build !nocv

package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/physd/physd/internal/rtspserver"
	"github.com/physd/physd/sim"
)

// rtspScene renders the structure s, writes it as H.264 at crf and
// publishes it in a loop to a real RTSP server on loopback as name, and
// returns the stream's URL once it is published. The server and the
// publisher stop when ctx ends or the test does.
func rtspScene(ctx context.Context, t *testing.T, name string, s sim.Structure, crf int) string {
	t.Helper()
	frames, _, err := sim.RenderStructure(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(t.TempDir(), name+".mp4")
	if err := sim.WriteVideo(ctx, clip, frames, 30, sim.Encoding{CRF: crf}); err != nil {
		t.Fatal(err)
	}
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	url := srv.URL(name)
	rtspserver.Publish(ctx, t, url, clip)
	if err := srv.WaitPublished(ctx, name); err != nil {
		t.Fatal(err)
	}
	return url
}
