// Package browser launches a headless Chromium for end-to-end tests of
// physd's web pages (the WebRTC publish page in particular) and collects
// what the page logs to its console.
//
// Chromium runs with a fake camera (optionally fed from a .y4m file, such as
// one written by sim.WriteY4M), media permissions granted without a prompt,
// loopback ICE candidates allowed, and every name lookup except localhost
// refused, so a test talks only to servers on this machine. Pages report to
// the test through console.log lines containing "physd:", which Chromium
// prints on its stderr; see Browser.Console.
//
// The package is Linux-only: it relies on process groups, PR_SET_PDEATHSIG
// and /proc to guarantee that no Chromium process outlives Close.
package browser
