package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestLoadSkipsNames checks that Load, with no vocabulary, accepts names
// it cannot know, and that LoadWith refuses them at their position.
func TestLoadSkipsNames(t *testing.T) {
	text := "estimator:\n  preset: huge\ncameras:\n  - name: a\n    source:\n" +
		"      synthetic: {system: spring, regime: wobbly, size: 8}\n"
	path := writeConfig(t, text)
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Estimator.Preset != "huge" || cfg.Cameras[0].Source.Synthetic.System != "spring" {
		t.Errorf("Load read preset %q, system %q", cfg.Estimator.Preset, cfg.Cameras[0].Source.Synthetic.System)
	}
	_, got := loadText(t, text)
	want := []string{
		`physd.yaml:2:11: estimator.preset: is "huge", want "edge" or "paper"`,
		`physd.yaml:6:27: cameras[0].source.synthetic.system: is "spring", want "pendulum", "intensity" or "scale"`,
		`physd.yaml:6:43: cameras[0].source.synthetic.regime: is "wobbly", want "underdamped", "undamped", "critical" or "overdamped"`,
		`physd.yaml:6:57: cameras[0].source.synthetic.size: is 8, want 16…4096`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadWith errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVocabularyFields checks that each empty field of a Vocabulary skips
// its own check only, and that a negative size is refused without bounds.
func TestVocabularyFields(t *testing.T) {
	text := []byte("estimator: {preset: huge}\ncameras:\n  - name: a\n    source: {synthetic: {system: spring, size: -1}}\n")
	_, err := ParseWith(text, "v.yaml", Vocabulary{Presets: []string{"edge"}})
	var paths []string
	for _, e := range unjoin(err) {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("error %q is not an *Error", e)
		}
		paths = append(paths, ce.Path)
	}
	want := []string{"estimator.preset", "cameras[0].source.synthetic.size"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("errors at %q, want %q (%v)", paths, want, err)
	}
}

// TestCheckNames checks a Config built in code: the default passes, and
// unknown names are errors naming the option path, without a position.
func TestCheckNames(t *testing.T) {
	if err := Default().CheckNames(testVocab()); err != nil {
		t.Errorf("Default: %v", err)
	}
	cfg := Default()
	cfg.Estimator.Preset = "huge"
	cam := DefaultCamera()
	cam.Name = "b"
	cam.Source.Synthetic.Regime = "wobbly"
	rtsp := DefaultCamera()
	rtsp.Name = "c"
	rtsp.Source.Kind = KindRTSP
	rtsp.Source.Synthetic.System = "ignored: not a synthetic source"
	cfg.Cameras = append(cfg.Cameras, cam, rtsp)
	cfg.Cameras[0].Source.Synthetic.System = "spring"
	cfg.Cameras[0].Source.Synthetic.Size = 8192
	var got []string
	for _, e := range unjoin(cfg.CheckNames(testVocab())) {
		var ce *Error
		if !errors.As(e, &ce) || ce.Line != 0 {
			t.Errorf("error %q is not an *Error without a position", e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		`config: estimator.preset: is "huge", want "edge" or "paper"`,
		`config: cameras[0].source.synthetic.system: is "spring", want "pendulum", "intensity" or "scale"`,
		`config: cameras[0].source.synthetic.size: is 8192, want 16…4096`,
		`config: cameras[1].source.synthetic.regime: is "wobbly", want "underdamped", "undamped", "critical" or "overdamped"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckNames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := cfg.CheckNames(Vocabulary{}); err != nil {
		t.Errorf("CheckNames with no vocabulary: %v", err)
	}
}
