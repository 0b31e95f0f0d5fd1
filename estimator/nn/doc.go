// Package nn is a small float64 neural-network layer library used by the
// per-frame CNN encoder of the estimator: it maps grayscale frames
// (N, 1, H, W) to one scalar latent per frame (N, 1).
//
// # Conventions
//
// Activations are *tensor.Dense values of dtype Float64 in row-major order.
// Images are laid out (N, C, H, W) and vectors (N, F); N is the batch size.
// Every dimension must be at least 1.
//
// A Layer caches what it needs from Forward for the following Backward.
// Backward(dy) takes dL/dy with the shape Forward returned and gives dL/dx
// with the shape of Forward's input. Parameter gradients are ADDED to
// Param.Grad, so call ZeroGrad before each accumulation window.
//
// Forward and Backward always return newly allocated tensors, so an output
// stays valid after later calls. A layer keeps a reference to (not a copy
// of) its Forward input until the next Forward; the caller must not modify
// that input before calling Backward. Layers reuse private scratch buffers
// and are therefore not safe for concurrent use; each call itself runs on
// up to runtime.GOMAXPROCS(0) goroutines.
//
// Wrong input shapes, dtypes or layouts are reported as errors wrapping
// ErrShape that name the layer and the offending shape; they never panic.
// Constructors panic on non-positive sizes, as those are programming errors.
//
// # Parameters, state and checkpoints
//
// Layer.Params returns the trainable parameters (Grad non-nil). Layers with
// non-trainable state implement Stateful: BatchNorm2D exposes its running
// mean and variance through Buffers as Params whose Grad is nil. ZeroGrad
// and Adam skip Params with a nil Grad. CheckpointParams(l) returns
// Params followed by Buffers, which is what SaveParams and LoadParams should
// be given to capture a model completely.
//
// Random initialisation takes a *math/rand/v2.Rand so results are
// reproducible from a seed; there is no package-level mutable state.
package nn
