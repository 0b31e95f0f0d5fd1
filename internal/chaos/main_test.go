//go:build !nocv

package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/physd/physd/internal/rtspserver"
)

var (
	flagOutage   = flag.Duration("chaos.outage", 5*time.Second, "how long nats-server stays dead, each time")
	flagOutages  = flag.Int("chaos.outages", 2, "how many times nats-server is killed")
	flagRTSPDown = flag.Duration("chaos.rtsp-down", 4*time.Second, "how long the RTSP server stays dead")
	flagKills    = flag.Int("chaos.kills", 3, "how many times physd is killed mid-checkpoint")
)

// rtspEnv, when set to host:port, makes the test binary an RTSP server on
// that address instead of running tests: the test kills this child
// process to kill the server.
const rtspEnv = "PHYSD_CHAOS_RTSP_SERVER"

func TestMain(m *testing.M) {
	if addr := os.Getenv(rtspEnv); addr != "" {
		os.Exit(serveRTSP(addr))
	}
	os.Exit(m.Run())
}

// serveRTSP runs the RTSP server child until SIGTERM (or SIGKILL).
func serveRTSP(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv, err := rtspserver.Listen(ctx, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rtsp server:", err)
		return 1
	}
	defer srv.Close()
	fmt.Println("rtsp server listening on", srv.Addr())
	for {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		err := srv.WaitPublished(wctx, "cam")
		cancel()
		if err == nil {
			fmt.Println("published cam")
			break
		}
		if ctx.Err() != nil {
			return 0
		}
	}
	<-ctx.Done()
	return 0
}
