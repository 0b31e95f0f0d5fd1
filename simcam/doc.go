// Package simcam is physd's built-in synthetic camera: the paper's
// simulated systems (package sim) rendered as a live stream.Source,
// released again every event, for demos, `make run` and tests.
//
// New builds a Camera from Options: the system (pendulum, intensity or
// scale), the regime or explicit coefficients (γ1, γ0), the state Z0 and
// the initial velocities V0 of the releases, the event length, frame rate,
// size, seed and nuisance. The frames go through the same
// stream.Preprocess as a real camera's, in real time or as fast as the
// consumer takes them. Package stream, which knows cameras and decoding
// but no physics, does not import this package; this package builds with
// the nocv tag (pure Go), like stream's Source, Frame and
// Preprocess.ApplyGray.
package simcam
