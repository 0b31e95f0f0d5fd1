//go:build !nocv

package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMQTTHomeAssistant runs the daemon on its synthetic camera with the
// embedded server's MQTT listener and reads it with a real MQTT client,
// Debian's mosquitto_sub, logged in with the password physd keeps: Home
// Assistant's discovery configs arrive (a sensor of f_n, ζ and the
// amplitude, the state, an alert binary sensor), and a certified
// estimate arrives on the state topic the f_n sensor names, its value
// what the sensor's template reads.
func TestMQTTHomeAssistant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon until it certifies")
	}
	sub, err := exec.LookPath("mosquitto_sub")
	if err != nil {
		t.Skip("no mosquitto_sub (Debian's mosquitto-clients; make test-deps installs it)")
	}
	dir := t.TempDir()
	cfg := testConfig()
	cfg.NATS.Embedded.MQTT.Listen = "127.0.0.1:0"
	r := start(t, cfg, dir)
	addr := r.d.MQTTAddr()
	if addr == "" {
		t.Fatal("no MQTT listener")
	}
	pw, err := os.ReadFile(filepath.Join(dir, MQTTPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sub, "-h", host, "-p", port, "-u", MQTTUser, "-P", strings.TrimSpace(string(pw)),
		"-t", "homeassistant/#", "-t", "physd/#", "-v", "-i", "physd-test")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	// Home Assistant's birth message makes physd publish its discovery
	// again, as soon as this client is subscribed.
	go func() {
		time.Sleep(2 * time.Second)
		pub, err := exec.LookPath("mosquitto_pub")
		if err != nil {
			return
		}
		_ = exec.CommandContext(ctx, pub, "-h", host, "-p", port, "-u", MQTTUser, "-P", strings.TrimSpace(string(pw)),
			"-t", "homeassistant/status", "-m", "online").Run()
	}()
	configs := map[string]map[string]any{}
	var fnTopic, fnTemplate string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		topic, payload, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if strings.HasPrefix(topic, "homeassistant/") && strings.HasSuffix(topic, "/config") {
			var c map[string]any
			if err := json.Unmarshal([]byte(payload), &c); err != nil {
				t.Fatalf("%s: %v", topic, err)
			}
			if _, seen := configs[topic]; !seen {
				t.Logf("discovery %s: %s", topic, payload)
			}
			configs[topic] = c
			if strings.HasSuffix(topic, "/fn/config") {
				fnTopic, fnTemplate = c["state_topic"].(string), c["value_template"].(string)
			}
			continue
		}
		if fnTopic == "" || topic != fnTopic {
			continue
		}
		var e struct {
			Fn        float64 `json:"fn_hz"`
			Certified bool    `json:"certified"`
		}
		if err := json.Unmarshal([]byte(payload), &e); err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		t.Logf("state %s: f_n %.4f Hz certified %v (template %s)", topic, e.Fn, e.Certified, fnTemplate)
		if !e.Certified || !(e.Fn > 0) || fnTemplate != "{{ value_json.fn_hz }}" {
			t.Errorf("the f_n sensor reads %q from %+v", fnTemplate, e)
		}
		for _, want := range []string{"sensor/physd_vm_pendulum/fn", "sensor/physd_vm_pendulum/zeta", "sensor/physd_vm_pendulum/amplitude",
			"sensor/physd_vm_pendulum/state", "binary_sensor/physd_vm_pendulum/alert"} {
			found := false
			for topic := range configs {
				found = found || strings.Contains(strings.Replace(topic, "physd_"+r.d.bus.node+"_", "physd_vm_", 1), want)
			}
			if !found {
				t.Errorf("no discovery config for %s among %d", want, len(configs))
			}
		}
		return
	}
	t.Fatalf("no certified estimate on the f_n sensor's topic (%q) before the deadline; %d discovery configs: %v", fnTopic, len(configs), sc.Err())
}
