package daemon

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
)

// The covariates reach the alerts' charts from each of their sources on a
// running daemon: a sensor publishing on its NATS subject with the board's
// subscriber key (which may publish that subject and no physd one), a
// file a sensor daemon rewrites, and POST /api/v1/covariates. Bad values
// and unknown names are refused; a stale value is not read.
func TestCovariateSources(t *testing.T) {
	dir := t.TempDir()
	sensor := filepath.Join(dir, "wind")
	cfg := testConfig()
	cfg.Cameras = nil
	cfg.Alerts.Covariates = []config.Covariate{
		{Name: "temperature", Subject: "env.bridge.temperature", MaxAge: time.Hour},
		{Name: "wind", File: sensor},
		{Name: "traffic"},
	}
	r := start(t, cfg, filepath.Join(dir, "state"))
	auth, err := r.d.SubscriberOptions()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(r.d.NATSURL(), append(auth, nats.Timeout(5*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	errs := make(chan error, 4)
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err })
	if err := nc.Publish("env.bridge.temperature", []byte(`{"value": 12.5}`)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("physd.bridge.estimate", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	if err := os.WriteFile(sensor, []byte("7.25\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	post := func(body string) int {
		resp, err := http.Post("http://"+r.d.HTTPAddr()+"/api/v1/covariates", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(`{"name": "traffic", "value": 42}`); code != http.StatusNoContent {
		t.Errorf("POST traffic: %d, want 204", code)
	}
	for _, bad := range []string{`{"name": "humidity", "value": 1}`, `{"name": "traffic"}`, `{"name": "traffic", "value": "x"}`, `[`} {
		if code := post(bad); code != http.StatusBadRequest {
			t.Errorf("POST %s: %d, want 400", bad, code)
		}
	}
	want := map[string]float64{"temperature": 12.5, "wind": 7.25, "traffic": 42}
	waitFor(t, 15*time.Second, "every covariate", func() bool {
		got := r.d.env.At(time.Now())
		return fmt.Sprint(got) == fmt.Sprint(want)
	})
	t.Logf("covariates now: %v", r.d.env.At(time.Now()))
	select {
	case err := <-errs:
		t.Logf("the subscriber's publish on physd's subject: %v", err)
	case <-time.After(5 * time.Second):
		t.Error("the subscriber key published on physd.bridge.estimate without a permissions violation")
	}
	if got := r.d.env.At(time.Now().Add(3 * time.Hour)); len(got) != 0 {
		t.Errorf("three hours on, stale covariates were read: %v", got)
	}
}
