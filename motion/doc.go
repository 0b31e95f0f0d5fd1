// Package motion measures and removes the camera's own motion: the global
// translation of the image from frame to frame that a shaking or drifting
// camera adds to everything in view. It knows pixels, not physics.
package motion
