// Package soak runs physd for a long time with four synthetic cameras and
// checks that it stays flat: resident memory and goroutines do not grow
// after a warm-up, while windows are processed and estimates published.
// `make soak` runs it for 30 minutes (SOAK=24h for a day); plain `go test`
// skips it.
package soak
