package estimator

import (
	"fmt"
	"slices"
	"sort"
)

// Preset is a complete training recipe.
type Preset struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Encoder is "lowrank" (LowRank) or "cnn" (the paper's CNN).
	Encoder string `json:"encoder"`
	// Size is the side, in pixels, frames are resized to before encoding;
	// Binarize thresholds them (Otsu) first.
	Size     int  `json:"size"`
	Binarize bool `json:"binarize"`
	// Features and Hidden size the LowRank encoder.
	Features int `json:"features"`
	Hidden   int `json:"hidden"`
	// CNNWidths and CNNHidden size the CNN encoder.
	CNNWidths []int `json:"cnn_widths,omitempty"`
	CNNHidden int   `json:"cnn_hidden,omitempty"`
	// Steps is the number of full-window gradient steps.
	Steps int `json:"steps"`
	// FixedFeatures keeps a low-rank encoder's spatial features W as the
	// closed form set them: training moves the layers after them, and the
	// features are computed once per fit instead of twice a step.
	FixedFeatures bool    `json:"fixed_features,omitempty"`
	LREncoder     float64 `json:"lr_encoder"`
	LRGamma       float64 `json:"lr_gamma"`
	// SolveGamma solves (γ1, γ0[, g]) exactly by least squares at every
	// step (the loss is quadratic in them) instead of an Adam step on them.
	SolveGamma bool `json:"solve_gamma"`
	// InitGamma is (γ1, γ0) at step 0 when γ is learned by Adam.
	InitGamma [2]float64 `json:"init_gamma"`
	// ClosedForm initialises the LowRank encoder by principal components
	// and the variable-projection readout.
	ClosedForm bool `json:"closed_form"`
	// Exact reports (γ1, γ0) through the exact AR(2) map, removing the
	// stencil's O(Δt²) bias.
	Exact bool `json:"exact"`
	// Exposure undoes per-frame exposure and gain changes before encoding
	// (NormalizeExposure).
	Exposure bool       `json:"exposure"`
	Loss     LossConfig `json:"loss"`
}

// Validate reports a preset that cannot train.
func (p Preset) Validate() error {
	if p.Encoder != "lowrank" && p.Encoder != "cnn" {
		return fmt.Errorf("preset %q: encoder %q: want lowrank or cnn", p.Name, p.Encoder)
	}
	if p.Size < 4 || p.Size > 1024 {
		return fmt.Errorf("preset %q: size %d: want 4…1024", p.Name, p.Size)
	}
	if p.Steps < 0 {
		return fmt.Errorf("preset %q: steps %d is negative", p.Name, p.Steps)
	}
	if p.Encoder == "lowrank" && p.Features < 1 {
		return fmt.Errorf("preset %q: features %d: want ≥ 1", p.Name, p.Features)
	}
	if p.Encoder == "cnn" && (len(p.CNNWidths) == 0 || p.CNNHidden < 1) {
		return fmt.Errorf("preset %q: cnn widths %v / hidden %d", p.Name, p.CNNWidths, p.CNNHidden)
	}
	if p.Steps > 0 && !(p.LREncoder > 0) {
		return fmt.Errorf("preset %q: lr_encoder %g must be positive", p.Name, p.LREncoder)
	}
	if !p.SolveGamma && p.Steps > 0 && !(p.LRGamma > 0) {
		return fmt.Errorf("preset %q: lr_gamma %g must be positive", p.Name, p.LRGamma)
	}
	if err := p.Loss.Validate(); err != nil {
		return fmt.Errorf("preset %q: %w", p.Name, err)
	}
	return nil
}

// DefaultPreset is the name of the preset physd uses unless told otherwise.
const DefaultPreset = "edge"

func presets() map[string]Preset {
	floor := LossConfig{Reg: VarFloor, Tau: 1, Lambda: 1, Eps: 1e-8}
	edgeLoss := floor
	edgeLoss.Offset = SharedOffset
	return map[string]Preset{
		"edge": {
			Name:        "edge",
			Description: "low-rank encoder on 64×64 frames (smooth spatial basis, set by the closed form), exposure normalised per frame, closed-form start, the layers after the features fine-tuned, γ by least squares each step, exact AR(2) map",
			Encoder:     "lowrank", Size: 64, Features: 32, Hidden: 8,
			Steps: 30, FixedFeatures: true, LREncoder: 1e-5, SolveGamma: true, ClosedForm: true, Exact: true,
			Exposure: true, Loss: edgeLoss,
		},
		"paper": {
			Name:        "paper",
			Description: "the paper's recipe: CNN 32/64/128 on binarised 64×64 frames, Adam 1e-3 (encoder) and 1e-2 (γ) from (1, 1), 30000 steps",
			Encoder:     "cnn", Size: 64, Binarize: true, CNNWidths: []int{32, 64, 128}, CNNHidden: 128,
			Steps: 30000, LREncoder: 1e-3, LRGamma: 1e-2, InitGamma: [2]float64{1, 1},
			Loss: floor,
		},
	}
}

// LookupPreset returns the named preset.
func LookupPreset(name string) (Preset, error) {
	p, ok := presets()[name]
	if !ok {
		return Preset{}, fmt.Errorf("unknown preset %q (have %v)", name, PresetNames())
	}
	p.CNNWidths = slices.Clone(p.CNNWidths)
	return p, nil
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var names []string
	for n := range presets() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
