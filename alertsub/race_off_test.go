//go:build !race

package alertsub

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
