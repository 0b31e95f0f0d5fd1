package flow

// Amplitude is how far a window's region moves along the principal
// direction of its motion, and the smallest motion its video resolves,
// both in the source's pixels (a preprocessed frame's pixel spans
// several of the camera's).
type Amplitude struct {
	// Px is the displacement's amplitude: √2 times its rms about the
	// window's mean, a sinusoid's peak.
	Px float64 `json:"px"`
	// NoisePx is the rms of the readout's noise: what is left of the
	// displacement once the motion the window's ODE fit explains is
	// taken out, or the frame-to-frame noise where there is no fit.
	NoisePx float64 `json:"noise_px"`
	// Readout names what measured it: "flow" (intensity gradients) or a
	// tracked object's name.
	Readout string `json:"readout"`
	// HeldShare is the share of the window's frames in which the
	// stream's codec held the moving pixels still (HeldShare): motion
	// below its quantiser, dropped. Zero for an uncompressed source.
	HeldShare float64 `json:"held_share,omitempty"`
}
