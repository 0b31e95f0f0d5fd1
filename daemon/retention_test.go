package daemon

import (
	"context"
	"log/slog"
	"math"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// A reported window's Result — its frames, exposure-normalised copies
// among them (6 MB a window on a real camera) — is garbage once
// reported: the camera's last diagnostic keeps a copy of the encoder
// info, not a pointer into the outcome, and the reporting goroutine does
// not keep the outcome alive while it waits a hop for the next one.
// Four cameras each holding one dead window set the daemon's peak memory.
func TestReportKeepsNoResult(t *testing.T) {
	cfg := testConfig()
	cc := cfg.Cameras[0]
	c := &reporter{camera: cc.Name, log: slog.New(slog.DiscardHandler), bus: &memPublisher{}, trainTime: noObserver{},
		rec: newRecord(), work: &stageWork{}, alerts: newAlerter(cc.Name, cfg.Alerts, nil)}
	in := make(chan outcome)
	done := make(chan struct{})
	go func() {
		c.run(context.Background(), in)
		close(done)
	}()
	defer func() {
		close(in)
		<-done
	}()
	frames := sendWindow(in)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, d := c.rec.latest(); d != nil {
			if d.Encoder == nil || d.Encoder.Version != 3 {
				t.Fatalf("diagnostic's encoder info %+v, want version 3", d.Encoder)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the outcome was not reported within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		runtime.GC()
		if frames.Value() == nil {
			return
		}
	}
	t.Error("a reported window's frames are still reachable while the camera waits for the next window")
}

// sendWindow hands the reporting stage one estimated window whose Result
// holds a frame, and returns a weak pointer to that frame. Its own frame
// is gone when it returns, so that only the camera can hold the outcome.
//
//go:noinline
func sendWindow(in chan<- outcome) weak.Pointer[float64] {
	frame := make([]float64, 1<<16)
	r := &estimator.Result{Gamma0: 4, Gamma1: 0.1, Dt: 0.05, Frames: [][][]float64{{frame}}}
	now := time.Now()
	in <- outcome{job: job{start: now.Add(-6 * time.Second), end: now, frames: 1}, res: r,
		verdict: window.Verdict{Status: window.NotCertified}, info: wire.EncoderInfo{Version: 3}}
	return weak.Make(&frame[0])
}

// The learning stage does not keep a window's Result alive while it
// waits for the next window either.
func TestLearnKeepsNoResult(t *testing.T) {
	cfg := testConfig()
	cc := cfg.Cameras[0]
	p, err := estimator.LookupPreset(cfg.Estimator.Preset)
	if err != nil {
		t.Fatal(err)
	}
	c := &learning{log: slog.New(slog.DiscardHandler), preset: p, th: thresholds(cfg.Certify), est: cfg.Estimator, dir: t.TempDir(),
		roi: cc.ROI, reference: cc.Reference, work: &stageWork{}, rec: newRecord()}
	jobs := make(chan batch, 1)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan outcome)
	done := make(chan struct{})
	go func() {
		c.run(ctx, jobs, out)
		close(done)
	}()
	defer func() {
		cancel()
		close(jobs)
		<-done
	}()
	jobs <- batch{next: swingJob()}
	res, err := takeOutcome(t, out)
	if err != nil {
		t.Fatalf("window not estimated: %v", err)
	}
	for range 5 {
		runtime.GC()
		if res.Value() == nil {
			return
		}
	}
	t.Error("an estimated window's Result is still reachable while the learning stage waits for the next window")
}

// swingJob is a window of a bright disc swinging in a dark 32×32 frame,
// lightly damped.
func swingJob() job {
	const w, n, dt = 32, 121, 0.05
	frames := make([][]float64, n)
	for k := range frames {
		tk := float64(k) * dt
		x := 16 + 8*math.Exp(-0.05*tk)*math.Cos(2*tk)
		f := make([]float64, w*w)
		for i := range f {
			dx, dy := float64(i%w)-x, float64(i/w)-16
			f[i] = 0.1 + 0.8*math.Exp(-(dx*dx+dy*dy)/8)
		}
		frames[k] = f
	}
	now := time.Now()
	return job{clips: []estimator.Clip{{W: w, H: w, Dt: dt, Frames: frames}}, start: now.Add(-6 * time.Second), end: now, frames: n}
}

// takeOutcome receives the learning stage's next outcome and returns a
// weak pointer to its Result; its own frame is gone when it returns.
//
//go:noinline
func takeOutcome(t *testing.T, out <-chan outcome) (weak.Pointer[estimator.Result], error) {
	select {
	case o := <-out:
		if o.err == nil && o.res == nil {
			t.Fatal("an outcome with neither a Result nor an error")
		}
		return weak.Make(o.res), o.err
	case <-time.After(60 * time.Second):
		t.Fatal("no outcome within 60 s")
		return weak.Pointer[estimator.Result]{}, nil
	}
}
