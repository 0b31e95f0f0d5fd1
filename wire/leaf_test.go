package wire

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A subscriber links the wire, not the daemon: neither the wire nor the
// alert subscriber pulls in cgo OpenCV, the WebRTC stack, the NATS server
// or the daemon.
func TestSubscribersLinkNoDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, pkg := range []string{"github.com/physd/physd/wire", "github.com/physd/physd/alertsub"} {
		out, err := exec.CommandContext(ctx, "go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range []string{"gocv.io/", "github.com/pion/", "github.com/nats-io/nats-server", "github.com/physd/physd/daemon", "github.com/physd/physd/stream"} {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
