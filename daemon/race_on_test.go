//go:build race

package daemon

// raceEnabled: the tests run under the race detector, which slows the
// estimator several times over; tests that must keep up with a real-time
// stream skip.
const raceEnabled = true
