package daemon

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// TestVocabulary checks what config holds as literals, since it imports
// neither estimator nor sim: its defaults are those packages' defaults, and
// the names its tests load with (config's testVocab) are the real ones.
func TestVocabulary(t *testing.T) {
	if got := config.Default().Estimator.Preset; got != estimator.DefaultPreset {
		t.Errorf("config's default preset is %q, estimator.DefaultPreset %q", got, estimator.DefaultPreset)
	}
	y := config.DefaultCamera().Source.Synthetic
	if y.System != string(sim.SystemPendulum) || y.Regime != string(sim.RegimeUnderdamped) || y.Size != sim.DefaultSize {
		t.Errorf("config's default synthetic source is %q, %q, size %d; want %q, %q, size %d",
			y.System, y.Regime, y.Size, sim.SystemPendulum, sim.RegimeUnderdamped, sim.DefaultSize)
	}
	v := Vocabulary()
	want := config.Vocabulary{
		Presets: []string{"edge", "paper"},
		Systems: []string{"pendulum", "intensity", "scale"},
		Regimes: []string{"underdamped", "undamped", "critical", "overdamped"},
		MinSize: 16, MaxSize: 4096,
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("Vocabulary() = %+v, config's tests use %+v: update config/config_test.go's testVocab", v, want)
	}
	for _, p := range v.Presets {
		if _, err := estimator.LookupPreset(p); err != nil {
			t.Error(err)
		}
	}
	for _, s := range v.Systems {
		if !sim.System(s).Valid() {
			t.Errorf("system %q is not valid", s)
		}
	}
	if err := config.Default().CheckNames(v); err != nil {
		t.Errorf("the default config: %v", err)
	}
}

// TestVocabularyNew checks that New refuses a Config built in code with a
// name the estimator or the simulator does not know, naming the option.
func TestVocabularyNew(t *testing.T) {
	for _, tc := range []struct {
		path string
		set  func(*config.Config)
	}{
		{"estimator.preset", func(c *config.Config) { c.Estimator.Preset = "huge" }},
		{"cameras[0].source.synthetic.system", func(c *config.Config) { c.Cameras[0].Source.Synthetic.System = "spring" }},
		{"cameras[0].source.synthetic.regime", func(c *config.Config) { c.Cameras[0].Source.Synthetic.Regime = "wobbly" }},
	} {
		cfg := config.Default()
		tc.set(cfg)
		_, err := New(cfg, Options{StateDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != tc.path || !strings.HasPrefix(err.Error(), "daemon: config: "+tc.path+": ") {
			t.Errorf("%s: New: %v", tc.path, err)
		}
	}
}
