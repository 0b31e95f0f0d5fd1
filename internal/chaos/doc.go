// Package chaos injects the faults physd must survive into real processes:
// a nats-server killed and restarted while four cameras stream, an RTSP
// server killed and restarted, and physd itself killed with SIGKILL while
// it writes a checkpoint. `go test ./internal/chaos` runs a short version;
// `make chaos` the long one (the -chaos.* flags). Each run prints its figures.
package chaos
