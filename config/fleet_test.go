package config

import (
	"strings"
	"testing"
)

// TestFleetKeys checks node.name, nats.embedded.domain and
// nats.embedded.leafnodes: a board's settings load, and each mistake is
// refused with an error naming its field.
func TestFleetKeys(t *testing.T) {
	good := `node: {name: board-1}
nats:
  embedded:
    domain: b1
    leafnodes:
      urls: ["nats-leaf://hub-1:7422", "tls://hub-2:7422", "hub-3:7422"]
      credentials_file: /etc/physd/hub.creds
`
	cfg, err := Parse([]byte(good), "good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node.EffectiveName() != "board-1" || cfg.NATS.Embedded.EffectiveDomain("board-1") != "b1" || len(cfg.NATS.Embedded.LeafNodes.URLs) != 3 {
		t.Errorf("got node %q, domain %q, leafnodes %v", cfg.Node.EffectiveName(), cfg.NATS.Embedded.Domain, cfg.NATS.Embedded.LeafNodes)
	}
	for _, c := range []struct{ yaml, field string }{
		{`node: {name: "a.b"}`, "node.name"},
		{`nats: {embedded: {domain: "x y"}}`, "nats.embedded.domain"},
		{`nats: {embedded: {leafnodes: {urls: ["http://hub:7422"]}}}`, "nats.embedded.leafnodes.urls[0]"},
		{`nats: {embedded: {leafnodes: {credentials_file: /x.creds}}}`, "nats.embedded.leafnodes.urls"},
		{`nats: {urls: ["nats://a:4222"], embedded: {leafnodes: {urls: ["hub:7422"]}}}`, "nats.embedded.leafnodes.urls"},
		{`nats: {embedded: {jetstream: false, leafnodes: {urls: ["hub:7422"]}}}`, "nats.embedded.leafnodes.urls"},
		{`nats: {embedded: {leafnodes: {urls: ["hub:7422"], tls: {cert_file: c.pem}}}}`, "nats.embedded.leafnodes.tls.key_file"},
	} {
		_, err := Parse([]byte(c.yaml), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want one naming %s", c.yaml, err, c.field)
		}
	}
}

// TestHostNodeName checks the node name made from a host name.
func TestHostNodeName(t *testing.T) {
	for host, want := range map[string]string{"pi-4": "pi-4", "board7.site.example": "board7", "a b": "a-b", "": "physd"} {
		if got := hostNodeName(host); got != want || !ValidCameraName(got) {
			t.Errorf("hostNodeName(%q) = %q, want %q", host, got, want)
		}
	}
}
