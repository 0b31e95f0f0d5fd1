package alertsub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testDelivery() Delivery {
	return Delivery{ID: "a.alert-raised.1.2", Subject: "physd.a.alert", State: "raised", Camera: "a", Attempt: 2,
		Data: []byte(`{"schema":"physd.alert/v1","camera":"a","state":"raised"}`)}
}

// TestCommandStdinEnvAndExit runs a command that writes its stdin and
// environment to files: both hold the alert; exit 0 is success, exit 3 a
// failure quoting its output.
func TestCommandStdinEnvAndExit(t *testing.T) {
	dir := t.TempDir()
	in, env := filepath.Join(dir, "in"), filepath.Join(dir, "env")
	c := Command{Line: "cat > " + in + "; env | grep ^PHYSD_ALERT_ | sort > " + env, Timeout: 10 * time.Second}
	d := testDelivery()
	if err := c.Run(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(in); string(b) != string(d.Data) {
		t.Errorf("stdin: %q, want %q", b, d.Data)
	}
	b, _ := os.ReadFile(env)
	for _, want := range []string{"PHYSD_ALERT_ID=a.alert-raised.1.2", "PHYSD_ALERT_SUBJECT=physd.a.alert", "PHYSD_ALERT_STATE=raised",
		"PHYSD_ALERT_CAMERA=a", "PHYSD_ALERT_ZONE=", "PHYSD_ALERT_ATTEMPT=2"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("environment lacks %s:\n%s", want, b)
		}
	}
	err := Command{Line: "echo no pager today >&2; exit 3", Timeout: 10 * time.Second}.Run(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no pager today") {
		t.Errorf("failing command: %v", err)
	}
}

// TestCommandTimeout kills a command (and the child its shell started)
// that outlives its timeout.
func TestCommandTimeout(t *testing.T) {
	start := time.Now()
	err := Command{Line: "sleep 30 & sleep 30", Timeout: 300 * time.Millisecond}.Run(context.Background(), testDelivery())
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Errorf("err %v, want a timeout", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("returned after %v", el)
	}
}

// TestWebhook posts to an httptest server: body and headers; a 500 is a
// failure quoting the response; a slow server times out.
func TestWebhook(t *testing.T) {
	var gotBody []byte
	var gotHdr http.Header
	status := http.StatusNoContent
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/hook", http.StatusFound)
			return
		}
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		gotBody, _ = io.ReadAll(r.Body)
		gotHdr = r.Header.Clone()
		w.WriteHeader(status)
		if status >= 300 {
			io.WriteString(w, "pager down")
		}
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for handlers
	d := testDelivery()
	w := Webhook{URL: srv.URL + "/hook", Timeout: 5 * time.Second}
	if err := w.Run(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if string(gotBody) != string(d.Data) {
		t.Errorf("body %q", gotBody)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "X-Physd-Alert-Id": d.ID, "X-Physd-Alert-Subject": d.Subject,
		"X-Physd-Alert-State": "raised", "X-Physd-Alert-Camera": "a", "X-Physd-Alert-Attempt": "2", "Idempotency-Key": d.ID} {
		if got := gotHdr.Get(k); got != v {
			t.Errorf("header %s: %q, want %q", k, got, v)
		}
	}
	status = http.StatusInternalServerError
	if err := w.Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "pager down") {
		t.Errorf("500: %v", err)
	}
	if err := (Webhook{URL: srv.URL + "/moved", Timeout: 5 * time.Second}).Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "302") {
		t.Errorf("redirect: %v, want a failure naming 302", err)
	}
	start := time.Now()
	err := Webhook{URL: srv.URL + "/slow", Timeout: 200 * time.Millisecond}.Run(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 3*time.Second {
		t.Errorf("slow server: %v after %v", err, time.Since(start))
	}
	if err := (Webhook{URL: "http://user:secret@127.0.0.1:1/x", Timeout: time.Second}).Run(context.Background(), d); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("refused connection: %v (must fail without quoting the password)", err)
	}
}

// TestDecodeAlert names the field of a bad message.
func TestDecodeAlert(t *testing.T) {
	hdr := map[string][]string{"Nats-Msg-Id": {"x"}}
	for _, tc := range []struct {
		hdr  map[string][]string
		data string
		want string
	}{
		{nil, `{}`, "header Nats-Msg-Id: missing"},
		{hdr, `not json`, "not alert JSON"},
		{hdr, `{"schema":"physd.alert/v2","camera":"a","state":"raised"}`, "field schema"},
		{hdr, `{"schema":"physd.alert/v1","camera":"a b","state":"raised"}`, "field camera"},
		{hdr, `{"schema":"physd.alert/v1","camera":"a","state":"maybe"}`, "field state"},
	} {
		_, err := decodeAlert("physd.a.alert", tc.hdr, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.data, err, tc.want)
		}
	}
	d, err := decodeAlert("physd.a.z.alert", hdr, []byte(`{"schema":"physd.alert/v1","camera":"a","zone":"z","state":"cleared"}`))
	if err != nil || d.State != "cleared" || d.Zone != "z" || d.ID != "x" {
		t.Errorf("%+v %v", d, err)
	}
	// From a hub's aggregate: the board in the subject must be the one
	// the alert names, in its node and its id.
	for _, tc := range []struct {
		id, node string
		ok       bool
	}{{"b1.a.alert.1.2", "b1", true}, {"b1.a.alert.1.2", "b3", false}, {"b3.a.alert.1.2", "b1", false}, {"b1.a.alert.1.2", "", false}} {
		data := fmt.Sprintf(`{"schema":"physd.alert/v1","node":%q,"camera":"a","state":"raised"}`, tc.node)
		_, err := decodeAlert("fleet.b1.physd.a.alert", map[string][]string{"Nats-Msg-Id": {tc.id}}, []byte(data))
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "came from board b1")) {
			t.Errorf("fleet.b1 alert, id %s, node %q: %v", tc.id, tc.node, err)
		}
	}
}

// TestConfigErrors names each bad field.
func TestConfigErrors(t *testing.T) {
	_, err := Config{Durable: "a b", Filters: []string{"physd..alert"}, DeadLetter: "physd.x.alert", MaxDeliver: -1,
		Backoff: []time.Duration{-time.Second}, AckWait: time.Millisecond}.withDefaults()
	for _, want := range []string{"durable:", "filter:", "action: none", "max-deliver:", "backoff:", "ack-wait:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	_, err = Config{Action: Command{Line: "true"}, DeadLetter: "physd.dead.alert"}.withDefaults()
	if err == nil || !strings.Contains(err.Error(), "dead-letter") {
		t.Errorf("dead letter inside the filters: %v", err)
	}
}
