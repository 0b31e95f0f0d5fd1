package wire

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/window"
)

// pinned are one message of each kind, with the ids and JSON physd
// published before the wire package (daemon at 2e6cf5b): JetStream
// deduplicates by the ids and physd alerts stores handled ones, so they
// must not change; "CERT" stands for the certificate's own encoding,
// which is window's.
func pinned() []struct {
	msg        Message
	id, json   string
	subject    string
	persisted  bool
	camera, zn string
} {
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	end := start.Add(10 * time.Second)
	v := window.Verdict{Status: window.NotCertified, Reasons: []string{"x"}, Coverage: window.Coverage{Lo: math.NaN(), Hi: math.NaN()}, RelResidual: math.Inf(1)}
	info := EncoderInfo{Version: 2, TotalSteps: 300, Steps: 30, Cold: true, TrainMS: 41.5}
	g := 4.0
	last := end
	return []struct {
		msg        Message
		id, json   string
		subject    string
		persisted  bool
		camera, zn string
	}{
		{&Estimate{Schema: SchemaEstimate, Node: "b1", Camera: "bridge", Zone: "left", WindowStart: start, WindowEnd: end, Frames: 200, Events: 1,
			Gamma0: 4, Gamma0Sigma: 0.01, Gamma1: 0.08, Gamma1Sigma: 0.002, Fn: 0.318, FnSigma: 0.001, Zeta: 0.02, ZetaSigma: 0.001, OmegaN: 2,
			DampedFreq: 0.318, Regime: "underdamped", Certified: true, Certificate: v, Encoder: info},
			"b1.bridge.left.estimate.1772366400123456789.1772366410123456789",
			`{"schema":"physd.estimate/v1","node":"b1","camera":"bridge","zone":"left","window_start":"2026-03-01T12:00:00.123456789Z","window_end":"2026-03-01T12:00:10.123456789Z","frames":200,"events":1,"gamma0":4,"gamma0_sigma":0.01,"gamma1":0.08,"gamma1_sigma":0.002,"fn_hz":0.318,"fn_sigma":0.001,"zeta":0.02,"zeta_sigma":0.001,"omega_n":2,"damped_freq_hz":0.318,"regime":"underdamped","certified":true,"certificate":CERT,"encoder":{"version":2,"total_steps":300,"steps":30,"cold":true,"train_ms":41.5}}`,
			"physd.bridge.left.estimate", true, "bridge", "left"},
		{&Diagnostic{Schema: SchemaDiagnostic, Node: "b1", Camera: "bridge", WindowStart: start, WindowEnd: end, Frames: 200, Events: 1,
			Verdict: "not-certified", Reasons: []string{"poor fit"}, Gamma0: &g, Certificate: &v, Encoder: &info},
			"b1.bridge.diag-window.1772366400123456789.1772366410123456789",
			`{"schema":"physd.diagnostic/v1","node":"b1","camera":"bridge","window_start":"2026-03-01T12:00:00.123456789Z","window_end":"2026-03-01T12:00:10.123456789Z","frames":200,"events":1,"verdict":"not-certified","certified":false,"reasons":["poor fit"],"gamma0":4,"certificate":CERT,"encoder":{"version":2,"total_steps":300,"steps":30,"cold":true,"train_ms":41.5}}`,
			"physd.bridge.diag", false, "bridge", ""},
		{&Diagnostic{Schema: SchemaDiagnostic, Camera: "bridge", WindowStart: start, WindowEnd: end, Frames: 40, Events: 1,
			Verdict: "certified", LoneEvent: true},
			"bridge.diag-event.1772366400123456789.1772366410123456789",
			`{"schema":"physd.diagnostic/v1","camera":"bridge","window_start":"2026-03-01T12:00:00.123456789Z","window_end":"2026-03-01T12:00:10.123456789Z","frames":40,"events":1,"verdict":"certified","certified":false}`,
			"physd.bridge.diag", false, "bridge", ""},
		{&Status{Schema: SchemaStatus, Node: "b1", Camera: "bridge", Zone: "left", Time: end, State: StateOnline, Source: "synthetic", Mode: "single",
			Frames: 5, Windows: map[string]int{"certified": 1, "not-certified": 2}, Encoder: info, LastEstimate: &last,
			Baseline: &Baseline{Fn: 0.3, Zeta: 0.02, Windows: 3, Since: start}},
			"bridge.left.status.1772366410123456789",
			`{"schema":"physd.status/v1","node":"b1","camera":"bridge","zone":"left","time":"2026-03-01T12:00:10.123456789Z","state":"online","source":"synthetic","mode":"single","frames":5,"frames_dropped":0,"breaks":0,"windows":{"certified":1,"not-certified":2},"windows_skipped":0,"events":0,"reconnects":0,"encoder":{"version":2,"total_steps":300,"steps":30,"cold":true,"train_ms":41.5},"last_estimate":"2026-03-01T12:00:10.123456789Z","baseline":{"fn_hz":0.3,"zeta":0.02,"windows":3,"since":"2026-03-01T12:00:00.123456789Z"}}`,
			"physd.bridge.left.status", false, "bridge", "left"},
		{&Alert{Schema: SchemaAlert, Node: "b1", Camera: "bridge", Time: end, State: AlertRaised, Reasons: []string{"drift"},
			Baseline: Baseline{Fn: 1, Since: start}, Fn: 0.9, Zeta: 0.02, FnDrift: 0.1, Windows: 2, WindowStart: start, WindowEnd: end},
			"b1.bridge.alert-raised.1772366400123456789.1772366410123456789",
			`{"schema":"physd.alert/v1","node":"b1","camera":"bridge","time":"2026-03-01T12:00:10.123456789Z","state":"raised","reasons":["drift"],"baseline":{"fn_hz":1,"zeta":0,"windows":0,"since":"2026-03-01T12:00:00.123456789Z"},"fn_hz":0.9,"zeta":0.02,"fn_drift":0.1,"zeta_drift":0,"windows":2}`,
			"physd.bridge.alert", true, "bridge", ""},
		{&Alert{Schema: SchemaAlert, Camera: "bridge", Zone: "left", Time: end, State: AlertCleared, Reasons: []string{"back"},
			WindowStart: start, WindowEnd: end},
			"bridge.left.alert-cleared.1772366400123456789.1772366410123456789",
			`{"schema":"physd.alert/v1","camera":"bridge","zone":"left","time":"2026-03-01T12:00:10.123456789Z","state":"cleared","reasons":["back"],"baseline":{"fn_hz":0,"zeta":0,"windows":0,"since":"0001-01-01T00:00:00Z"},"fn_hz":0,"zeta":0,"fn_drift":0,"zeta_drift":0,"windows":0}`,
			"physd.bridge.left.alert", true, "bridge", "left"},
	}
}

// TestMessagesPinned: every kind's id, JSON and subject are those physd
// published before the wire package, and the subject parses back.
func TestMessagesPinned(t *testing.T) {
	for _, tc := range pinned() {
		if got := tc.msg.ID(); got != tc.id {
			t.Errorf("%T id\n got %s\nwant %s", tc.msg, got, tc.id)
		}
		b, err := json.Marshal(tc.msg)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.json
		if strings.Contains(want, "CERT") {
			var cert []byte
			switch m := tc.msg.(type) {
			case *Estimate:
				cert, err = json.Marshal(m.Certificate)
			case *Diagnostic:
				cert, err = json.Marshal(m.Certificate)
			}
			if err != nil {
				t.Fatal(err)
			}
			want = strings.Replace(want, "CERT", string(cert), 1)
		}
		if string(b) != want {
			t.Errorf("%T JSON\n got %s\nwant %s", tc.msg, b, want)
		}
		subj := Subject("physd", tc.msg.Key(), tc.msg.Kind())
		if subj != tc.subject || tc.msg.Kind().Persisted() != tc.persisted {
			t.Errorf("%T: subject %s persisted %v, want %s %v", tc.msg, subj, tc.msg.Kind().Persisted(), tc.subject, tc.persisted)
		}
		cam, zone, kind, err := ParseSubject("physd", subj)
		if err != nil || cam != tc.camera || zone != tc.zn || kind != tc.msg.Kind() {
			t.Errorf("ParseSubject(%s) = %q %q %q %v", subj, cam, zone, kind, err)
		}
	}
}

// TestMsgIDWithoutNode: a board without a name leaves the node out, as
// physd's ids before fleets.
func TestMsgIDWithoutNode(t *testing.T) {
	start, end := time.Unix(1, 2), time.Unix(3, 4)
	if got, want := (&Estimate{Camera: "c", WindowStart: start, WindowEnd: end}).ID(), "c.estimate.1000000002.3000000004"; got != want {
		t.Errorf("id %s, want %s", got, want)
	}
}

// TestKinds: only estimates, alerts and alerts' evidence are kept by the
// stream, whose subjects are those physd has always configured and the
// evidence's after them; only heartbeats are live.
func TestKinds(t *testing.T) {
	var persisted, live []Kind
	for _, k := range Kinds() {
		if !k.Valid() {
			t.Errorf("%s not valid", k)
		}
		if k.Persisted() {
			persisted = append(persisted, k)
		}
		if k.Live() {
			live = append(live, k)
		}
	}
	if !reflect.DeepEqual(persisted, []Kind{KindEstimate, KindAlert, KindEvidence}) || !reflect.DeepEqual(live, []Kind{KindStatus}) {
		t.Errorf("persisted %v, live %v", persisted, live)
	}
	if Kind("alerts").Valid() || Kind("").Valid() {
		t.Error("an unknown kind is valid")
	}
	want := []string{"site.physd.*.estimate", "site.physd.*.alert", "site.physd.*.*.estimate", "site.physd.*.*.alert",
		"site.physd.modes.*.estimate.*", "site.physd.modes.*.alert.*", "site.physd.modes.*.*.estimate.*", "site.physd.modes.*.*.alert.*",
		"site.physd.*.evidence", "site.physd.*.*.evidence"}
	if got := StreamSubjects("site.physd"); !reflect.DeepEqual(got, want) {
		t.Errorf("stream subjects %v, want %v", got, want)
	}
}

// TestParseSubject: a dotted prefix is stripped whole; what Subject
// cannot make is refused.
func TestParseSubject(t *testing.T) {
	cam, zone, kind, err := ParseSubject("site.physd", "site.physd.bridge.left.alert")
	if err != nil || cam != "bridge" || zone != "left" || kind != KindAlert {
		t.Errorf("dotted prefix: %q %q %q %v", cam, zone, kind, err)
	}
	for _, s := range []string{
		"other.bridge.estimate",           // another prefix
		"physdx.bridge.estimate",          // a prefix that only starts alike
		"physd.estimate",                  // no camera
		"physd.a.b.c.estimate",            // more than a zone
		"physd.bridge.estimates",          // an unknown kind
		"physd.bridge..estimate",          // an empty token
		"physd.*.estimate",                // a wildcard
		"physd.>",                         // a wildcard
		"fleet.b1.physd.bridge.estimate",  // a hub's aggregate subject
		"physd.modes.bridge.estimate.m1",  // mode 1 has no mode token
		"physd.modes.bridge.estimate.m02", // not a label
		"physd.modes.bridge.estimate.x2",  // not a mode token
		"physd.modes.bridge.status.m2.x",  // a token past the mode
		"physd.bridge.estimate.m2",        // a mode without the modes token
	} {
		if _, _, _, err := ParseSubject("physd", s); err == nil {
			t.Errorf("ParseSubject(physd, %s): no error", s)
		}
	}
}
