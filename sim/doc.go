// Package sim renders the synthetic videos used to test the physd estimator
// on known ground truth, following the "Simulation" part of the experimental
// settings of the paper "Physics from Video".
//
// A [Scene] describes one clip: a system (a pendulum, a polygon whose gray
// level changes, or an asymmetric circle whose halves change size), the
// coefficients (γ1, γ0) of the linear ODE
//
//	z'' + γ1 z' + γ0 z = 0,
//
// an initial condition, the clip length and frame rate, the frame size, an
// optional nuisance (static background squares, moving clutter, camera
// jitter or uneven lighting) and a seed. [Render] solves the ODE in closed
// form ([Solve]) at the frame times and rasterises one anti-aliased 8-bit
// gray frame per time step. [RenderSet] renders several clips through one
// shared observation map, as in the paper's multi-trajectory experiments.
// [WriteMP4] and [WriteY4M] store frames as video files.
//
// A [Structure] describes a different kind of clip, for small motion: a
// hanging block, a cable, the edge of a beam or a bending mast that
// vibrates by fractions of a pixel to a few pixels (the sum of damped
// [Mode]s) over a static band-limited texture, with pixel noise.
// [RenderStructure] renders it with exact sub-pixel area coverage and
// returns the true displacement per frame; [WriteVideo] compresses the
// frames as a camera stream would ([Encoding]: H.264 or H.265, CRF and
// keyframe interval).
//
// Everything is deterministic: the only sources of randomness are
// math/rand/v2 generators seeded from [Scene.Seed] or [Structure.Seed] (and,
// for a Structure's textures, a hash of that seed), so the same scene always
// gives byte-identical frames.
package sim
