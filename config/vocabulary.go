package config

import (
	"errors"
	"fmt"
)

// Vocabulary is the names a configuration may use that other packages
// own: presets (package estimator), simulated systems and regimes and the
// rendered size bounds (package sim). The caller that knows them passes it
// (cmd/physd), so config need not import them. A zero Vocabulary skips
// those checks; so does each empty field alone (MaxSize 0 skips the size
// bounds, though a negative size is still refused).
type Vocabulary struct {
	// Presets are the estimator presets estimator.preset may name.
	Presets []string
	// Systems are the simulated systems source.synthetic.system may name.
	Systems []string
	// Regimes are the regimes source.synthetic.regime may name.
	Regimes []string
	// MinSize and MaxSize bound source.synthetic.size when it is not 0.
	MinSize, MaxSize int
}

// CheckNames checks the names c uses against v as ParseWith does, for a
// Config built in code rather than parsed. It returns nil or an
// errors.Join of *Error values, each naming the option path, without a
// position (Source is "config").
func (c *Config) CheckNames(v Vocabulary) error {
	errs := &errorList{source: "config"}
	val := &validator{errs: errs, pos: map[string]pos{}, vocab: v}
	val.preset(c.Estimator.Preset)
	for i, cam := range c.Cameras {
		if cam.Source.Kind != KindSynthetic {
			continue
		}
		p := fmt.Sprintf("cameras[%d].source.synthetic", i)
		val.syntheticNames(p, cam.Source.Synthetic)
		val.syntheticSize(p+".size", cam.Source.Synthetic.Size)
	}
	return errors.Join(errs.errs...)
}

// preset checks estimator.preset against the vocabulary.
func (v *validator) preset(name string) {
	if len(v.vocab.Presets) > 0 {
		v.oneOf("estimator.preset", name, v.vocab.Presets...)
	}
}

// syntheticNames checks the system and regime of the synthetic source at p
// against the vocabulary.
func (v *validator) syntheticNames(p string, y Synthetic) {
	if len(v.vocab.Systems) > 0 {
		v.oneOf(p+".system", y.System, v.vocab.Systems...)
	}
	if len(v.vocab.Regimes) > 0 {
		v.oneOf(p+".regime", y.Regime, v.vocab.Regimes...)
	}
}

// syntheticSize checks a synthetic frame size at path: 0 (the default) or
// within the vocabulary's bounds, and never negative.
func (v *validator) syntheticSize(path string, size int) {
	switch {
	case size == 0:
	case v.vocab.MaxSize > 0 && (size < v.vocab.MinSize || size > v.vocab.MaxSize):
		v.errorf(path, "is %d, want %d…%d", size, v.vocab.MinSize, v.vocab.MaxSize)
	case size < 0:
		v.errorf(path, "is %d, want > 0 (or 0 for the default)", size)
	}
}
