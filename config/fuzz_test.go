package config

import (
	"fmt"
	"time"
	"errors"
	"os"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, and that it returns either a
// config or an error made of *Error values, never both or neither. The
// seed corpus is in testdata/fuzz/FuzzParse; the example file is a seed too.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(exampleFile); err == nil {
		f.Add(data)
	}
	f.Add([]byte("cameras:\n  - name: a\n    window: {hop: 1s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("HANG %q", data)) })
		cfg, err := Parse(data, "fuzz.yaml")
		tm.Stop()
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
		if added != nil || removed != nil || changed != nil || GlobalChanged(cfg, cfg) != nil {
			t.Fatalf("a config differs from itself")
		}
		names := map[string]bool{}
		for _, c := range cfg.Cameras {
			if !ValidCameraName(c.Name) || names[c.Name] {
				t.Fatalf("accepted camera name %q", c.Name)
			}
			names[c.Name] = true
		}
		_ = reflect.DeepEqual(cfg, Default())
	})
}
