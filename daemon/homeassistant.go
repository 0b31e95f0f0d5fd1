package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/wire"
)

// MQTTAddr is the embedded server's MQTT listener, host:port ("" when
// there is none, or before Run has started it).
func (d *Daemon) MQTTAddr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bus == nil {
		return ""
	}
	return mqttAddr(d.bus.embedded)
}

// discoveryEvery is how often Home Assistant's discovery is published
// again: a message from NATS is not retained by the MQTT side, so a Home
// Assistant that starts later hears it at its birth message (its
// <prefix>/status "online") or within this.
const discoveryEvery = 5 * time.Minute

// haEntity is one Home Assistant MQTT discovery config.
type haEntity struct {
	Name           string   `json:"name"`
	UniqueID       string   `json:"unique_id"`
	StateTopic     string   `json:"state_topic"`
	ValueTemplate  string   `json:"value_template"`
	Unit           string   `json:"unit_of_measurement,omitempty"`
	StateClass     string   `json:"state_class,omitempty"`
	DeviceClass    string   `json:"device_class,omitempty"`
	EntityCategory string   `json:"entity_category,omitempty"`
	Device         haDevice `json:"device"`
}

type haDevice struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model"`
}

// topicOf is a NATS subject as MQTT clients see it.
func topicOf(subject string) string { return strings.ReplaceAll(subject, ".", "/") }

// discovery is Home Assistant's discovery for one camera or zone (key,
// wire.Key) and its mode labels: per mode, sensors of f_n, ζ and the
// amplitude on the mode's estimates; per camera, its state and an alert
// binary sensor. Each message is (subject, payload).
func discovery(discoveryPrefix, subjectPrefix, node, key string, labels []int) [][2]string {
	dev := "physd_" + strings.ReplaceAll(node+"_"+key, ".", "_")
	device := haDevice{Identifiers: []string{dev}, Name: "physd " + key, Manufacturer: "physd", Model: "vibration camera"}
	var out [][2]string
	add := func(component, object string, e haEntity) {
		e.UniqueID, e.Device = dev+"_"+object, device
		b, _ := json.Marshal(e)
		out = append(out, [2]string{fmt.Sprintf("%s.%s.%s.%s.config", discoveryPrefix, component, dev, object), string(b)})
	}
	for _, label := range labels {
		est := wire.Subject(subjectPrefix, key, wire.KindEstimate)
		name, obj := "", ""
		if label > 1 {
			est = wire.ModeSubject(subjectPrefix, key, wire.KindEstimate, label)
			name, obj = fmt.Sprintf(" mode %d", label), fmt.Sprintf("_m%d", label)
		}
		topic := topicOf(est)
		add("sensor", "fn"+obj, haEntity{Name: "natural frequency" + name, StateTopic: topic, ValueTemplate: "{{ value_json.fn_hz }}", Unit: "Hz", StateClass: "measurement", DeviceClass: "frequency"})
		add("sensor", "zeta"+obj, haEntity{Name: "damping ratio" + name, StateTopic: topic, ValueTemplate: "{{ value_json.zeta }}", StateClass: "measurement"})
		add("sensor", "amplitude"+obj, haEntity{Name: "amplitude" + name, StateTopic: topic, Unit: "px", StateClass: "measurement",
			ValueTemplate: "{{ value_json.amplitude.px if value_json.amplitude is defined else none }}"})
	}
	add("sensor", "state", haEntity{Name: "state", StateTopic: topicOf(wire.Subject(subjectPrefix, key, wire.KindStatus)), ValueTemplate: "{{ value_json.state }}", EntityCategory: "diagnostic"})
	add("binary_sensor", "alert", haEntity{Name: "structural alert", StateTopic: topicOf(wire.Subject(subjectPrefix, key, wire.KindAlert)), DeviceClass: "problem",
		ValueTemplate: "{{ 'ON' if value_json.state == 'raised' else 'OFF' }}"})
	return out
}

// publishDiscovery publishes Home Assistant's discovery for every line at
// start, every discoveryEvery, and whenever Home Assistant says it is
// online (<prefix>/status), until ctx ends. Modes beyond the first are
// included once a line has published an estimate of theirs.
func (d *Daemon) publishDiscovery(ctx context.Context, nc *nats.Conn, discoveryPrefix, subjectPrefix string) {
	birth := make(chan struct{}, 1)
	sub, err := nc.Subscribe(discoveryPrefix+".status", func(m *nats.Msg) {
		if strings.TrimSpace(string(m.Data)) == "online" {
			select {
			case birth <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		d.log.Warn("home assistant's status not heard", "err", err)
	} else {
		defer func() { _ = sub.Unsubscribe() }()
	}
	publish := func() {
		d.mu.Lock()
		node := d.bus.node
		type lineLabels struct {
			key    string
			labels []int
		}
		var lines []lineLabels
		for key, l := range d.lines {
			if l.spec.sourceOnly {
				continue
			}
			labels := []int{1}
			for _, e := range l.rec.modeEstimates() {
				if e.Mode != nil && e.Mode.Label > 1 {
					labels = append(labels, e.Mode.Label)
				}
			}
			lines = append(lines, lineLabels{key, labels})
		}
		d.mu.Unlock()
		for _, l := range lines {
			for _, m := range discovery(discoveryPrefix, subjectPrefix, node, l.key, l.labels) {
				if err := nc.Publish(m[0], []byte(m[1])); err != nil {
					d.log.Warn("home assistant discovery not published", "subject", m[0], "err", err)
				}
			}
		}
	}
	publish()
	t := time.NewTicker(discoveryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			publish()
		case <-birth:
			publish()
		}
	}
}
