package config

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that ParseWith (with the binary's vocabulary) never
// panics, and that it returns either a config or an error made of *Error
// values, never both or neither. The
// seed corpus is in testdata/fuzz/FuzzParse. (The 9 kB example file is not
// a seed: minimising its mutations stalls the fuzzer for a minute each.)
func FuzzParse(f *testing.F) {
	f.Add([]byte("cameras:\n  - name: a\n    window: {hop: 1s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseWith(data, "fuzz.yaml", testVocab())
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", cfg != nil, err)
		}
		if err != nil {
			for _, e := range unjoin(err) {
				var ce *Error
				if !errors.As(e, &ce) {
					t.Fatalf("error %q is not an *Error", e)
				}
				_ = e.Error()
			}
			return
		}
		// A config Parse accepts is valid, and its cameras are unique.
		added, removed, changed := Diff(cfg, cfg)
		if added != nil || removed != nil || changed != nil || GlobalChanged(cfg, cfg) != nil || ZonesChanged(cfg, cfg) != nil {
			t.Fatalf("a config differs from itself")
		}
		names := map[string]bool{}
		for _, c := range cfg.Cameras {
			if !ValidCameraName(c.Name) || names[c.Name] {
				t.Fatalf("accepted camera name %q", c.Name)
			}
			names[c.Name] = true
			if len(c.Zones) > MaxZones || (len(c.Zones) > 0 && !c.ROI.IsZero()) {
				t.Fatalf("accepted camera %q with %d zones and roi %+v", c.Name, len(c.Zones), c.ROI)
			}
			zones := map[string]bool{}
			for _, z := range c.Zones {
				if !ValidCameraName(z.Name) || zones[z.Name] || z.ROI.IsZero() {
					t.Fatalf("accepted zone %+v of camera %q", z, c.Name)
				}
				zones[z.Name] = true
			}
		}
		_ = reflect.DeepEqual(cfg, Default())
	})
}
