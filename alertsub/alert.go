package alertsub

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// Delivery is one alert as the action sees it.
type Delivery struct {
	// ID is the alert's Nats-Msg-Id: the same alert always has the same id.
	ID string
	// Subject is the subject it was published on.
	Subject string
	// State is "raised" or "cleared".
	State string
	// Camera and Zone (empty for a camera without zones) name the source.
	Camera, Zone string
	// Attempt counts deliveries of this message, from 1.
	Attempt int
	// Data is the alert's JSON, as published.
	Data []byte
}

// decodeAlert reads an alert message: its JSON must be a physd.alert/v1
// object with a camera name and a state of raised or cleared, and it must
// carry a Nats-Msg-Id. An error names the field.
func decodeAlert(subject string, hdr nats.Header, data []byte) (Delivery, error) {
	d := Delivery{Subject: subject, Data: data}
	if hdr != nil {
		d.ID = hdr.Get(nats.MsgIdHdr)
	}
	if d.ID == "" {
		return d, fmt.Errorf("alert on %s: header %s: missing (physd sets it on every alert)", subject, nats.MsgIdHdr)
	}
	var a wire.Alert
	if err := json.Unmarshal(data, &a); err != nil {
		return d, fmt.Errorf("alert %s on %s: not alert JSON: %w", d.ID, subject, err)
	}
	switch {
	case a.Schema != wire.SchemaAlert:
		return d, fmt.Errorf("alert %s on %s: field schema: %q, want %q", d.ID, subject, a.Schema, wire.SchemaAlert)
	case !config.ValidCameraName(a.Camera):
		return d, fmt.Errorf("alert %s on %s: field camera: %q is not a camera name", d.ID, subject, a.Camera)
	case a.State != wire.AlertRaised && a.State != wire.AlertCleared:
		return d, fmt.Errorf("alert %s on %s: field state: %q, want raised or cleared", d.ID, subject, a.State)
	}
	// On a hub's aggregate stream (fleet.<board>.…, docs/fleet.md) the
	// board is the subject's, which its credentials prove: an alert that
	// claims another board, in its node or its id, is refused
	// (dead-lettered, its action not run, its id not recorded as
	// handled, where it could stand in for the real board's alert).
	if rest, ok := strings.CutPrefix(subject, fleetRoot+"."); ok {
		board, _, _ := strings.Cut(rest, ".")
		if a.Node != board || !strings.HasPrefix(d.ID, board+".") {
			return d, fmt.Errorf("alert %s on %s: claims node %q, but came from board %s", d.ID, subject, a.Node, board)
		}
	}
	d.State, d.Camera, d.Zone = string(a.State), a.Camera, a.Zone
	return d, nil
}

// fleetRoot is the first token of a hub's aggregate subjects
// (fleet.SubjectRoot; that package's tests import this one).
const fleetRoot = "fleet"
