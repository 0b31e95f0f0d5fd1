package alertsub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Action is what the subscriber does with each alert. Run returns nil only
// when the alert was handed over; an error means try again later.
type Action interface {
	Run(ctx context.Context, d Delivery) error
	// String names the action in logs.
	String() string
}

// outputLimit bounds the command output or response body quoted in an
// error.
const outputLimit = 512

// Command runs a shell command line (/bin/sh -c) per alert, with the
// alert's JSON on stdin and PHYSD_ALERT_ID, PHYSD_ALERT_SUBJECT,
// PHYSD_ALERT_STATE, PHYSD_ALERT_CAMERA, PHYSD_ALERT_ZONE and
// PHYSD_ALERT_ATTEMPT in its environment. Exit status 0 is success. The
// alert never appears in the command line.
type Command struct {
	// Line is the command line, as sh reads it.
	Line string
	// Timeout bounds one run; the command's process group is killed then.
	Timeout time.Duration
}

// String names the command.
func (c Command) String() string { return "command " + strconv.Quote(c.Line) }

// Run runs the command once for d.
func (c Command) Run(ctx context.Context, d Delivery) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Line)
	cmd.Stdin = bytes.NewReader(d.Data)
	cmd.Env = append(os.Environ(), envVars(d)...)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, killed whole on timeout, so that a child the
	// shell started cannot outlive it holding the output pipe.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: timed out after %v%s", c, c.Timeout, out.quote())
	default:
		return fmt.Errorf("%s: %w%s", c, err, out.quote())
	}
}

// envVars are the alert's environment variables.
func envVars(d Delivery) []string {
	return []string{
		"PHYSD_ALERT_ID=" + d.ID,
		"PHYSD_ALERT_SUBJECT=" + d.Subject,
		"PHYSD_ALERT_STATE=" + d.State,
		"PHYSD_ALERT_CAMERA=" + d.Camera,
		"PHYSD_ALERT_ZONE=" + d.Zone,
		"PHYSD_ALERT_ATTEMPT=" + strconv.Itoa(d.Attempt),
	}
}

// Webhook POSTs each alert's JSON (Content-Type application/json) to URL
// with the headers X-Physd-Alert-Id, X-Physd-Alert-Subject,
// X-Physd-Alert-State, X-Physd-Alert-Camera, X-Physd-Alert-Zone,
// X-Physd-Alert-Attempt and Idempotency-Key (the id). A 2xx status is
// success; a redirect is not followed (it would turn the POST into a GET)
// and counts as a failure.
type Webhook struct {
	URL string
	// Timeout bounds one request, the response body included.
	Timeout time.Duration
	// Client sends the requests; nil uses one that does not follow
	// redirects.
	Client *http.Client
}

// String names the webhook without its user information or query.
func (w Webhook) String() string {
	u, err := url.Parse(w.URL)
	if err != nil {
		return "webhook"
	}
	return "webhook " + u.Redacted()
}

// Run POSTs d once.
func (w Webhook) Run(ctx context.Context, d Delivery) error {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(d.Data))
	if err != nil {
		return fmt.Errorf("%s: %w", w, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "physd-alerts")
	req.Header.Set("Idempotency-Key", d.ID)
	for _, kv := range envVars(d) {
		k, v, _ := strings.Cut(strings.TrimPrefix(kv, "PHYSD_ALERT_"), "=")
		req.Header.Set("X-Physd-Alert-"+headerCase(k), v)
	}
	client := w.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s: timed out after %v", w, w.Timeout)
		}
		return fmt.Errorf("%s: %w", w, err)
	}
	defer resp.Body.Close()
	var body tail
	_, _ = io.Copy(&body, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: status %s%s", w, resp.Status, body.quote())
	}
	return nil
}

// headerCase turns ID into Id, SUBJECT into Subject.
func headerCase(s string) string {
	return s[:1] + strings.ToLower(s[1:])
}

// tail keeps the last outputLimit bytes written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > outputLimit {
		t.b = t.b[len(t.b)-outputLimit:]
	}
	return len(p), nil
}

// quote is ": <output>" for an error, or "" when there was none.
func (t *tail) quote() string {
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return ""
	}
	return ": " + strconv.Quote(s)
}
