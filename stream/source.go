package stream

import (
	"context"
	"math"
	"net/url"
	"strings"
	"time"
)

// Source is a camera or a recording that delivers preprocessed frames.
//
// The sources of this package are NewFileSource (a video file),
// NewRTSPSource (an RTSP camera) and NewV4L2Source (a local camera); the
// built-in synthetic camera is package simcam's Camera. Run may be called
// again after it returns; each call opens the source afresh and starts
// again from Seq 0. Calls to Run on one source must not overlap.
type Source interface {
	// Name identifies the source in logs and errors; it never contains
	// credentials (the userinfo of URLs is stripped).
	Name() string
	// Run opens the source and calls emit for every frame in capture
	// order until ctx is done (it returns ctx.Err()), the source ends (it
	// returns io.EOF, e.g. a file that ends without Loop), or it fails (it
	// returns a wrapped error naming the source). If emit returns an error
	// Run stops and returns that error unchanged. emit is called from the
	// goroutine that called Run and may keep the Frame.
	Run(ctx context.Context, emit func(Frame) error) error
}

// Compile-time checks that the sources implement Source.
var (
	_ Source = (*FileSource)(nil)
	_ Source = (*RTSPSource)(nil)
	_ Source = (*V4L2Source)(nil)
)

// SleepUntil waits until the wall clock reaches t or ctx is done, and
// returns ctx.Err() in the latter case. It returns at once if t has passed.
// Sources that pace their frames in real time (Realtime options) wait with
// it for each frame's Wall.
func SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// sensitiveQueryKey reports URL query parameters whose values are redacted
// from names: some cameras take credentials in the query string.
func sensitiveQueryKey(k string) bool {
	switch strings.ToLower(k) {
	case "user", "username", "pass", "password", "pwd", "passwd", "token", "auth",
		"key", "secret", "signature", "sig", "access_token", "apikey", "api_key":
		return true
	}
	return false
}

// redactURL returns u without userinfo and with the values of credential-
// like query parameters replaced by "REDACTED", for logs and errors. A
// string that does not parse as a URL with a host is returned as
// "<unparsable URL>" rather than risk echoing a secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<unparsable URL>"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if sensitiveQueryKey(k) {
				q[k] = []string{"REDACTED"}
			}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment = ""
	return u.String()
}

// IndexTime is the time of frame seq at a constant rate fps > 0, seq/fps
// rounded to the nanosecond: Frame.Time for frames at a fixed rate (a file
// read with FPS set, the synthetic camera of package simcam).
func IndexTime(seq int, fps float64) time.Duration {
	return time.Duration(math.Round(float64(seq) / fps * float64(time.Second)))
}
