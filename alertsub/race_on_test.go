//go:build race

package alertsub

// raceEnabled: the tests run under the race detector, which slows the
// daemon's estimator several times over; the test that runs it skips.
const raceEnabled = true
