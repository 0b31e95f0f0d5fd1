// Command paper reproduces every table of Sec. 5 and of the appendix
// "Additional simulation results" of the paper physd implements: each cell
// is rendered by package sim with several seeds, written as H.264, read
// back like any camera's video, fitted with the default preset and
// certified. It writes a Markdown report with, per cell, the paper's
// value, the ground truth, ours (mean ± std over seeds) and our verdicts.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/figure"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
)

// outcome is one seed's result for a cell.
type outcome struct {
	g0, g1  float64
	s0, s1  float64
	verdict window.Status
	// identified: the paper's conditions hold (window.Verdict.Identified);
	// precision is the estimate's σ against the precision limits.
	identified bool
	precision  window.Precision
	// regime is the label the estimate was published with.
	regime estimator.Regime
	err    error
	// dump is the fit's record for -dump (nil without it).
	dump *fitRecord
}

// fitRecord is one fit's line of the -dump file: the reported readout's
// estimate and verdict (with every other readout's as alternatives).
type fitRecord struct {
	Cell    string         `json:"cell"`
	Seed    int            `json:"seed"`
	Readout string         `json:"readout"`
	Gamma0  any            `json:"gamma0"`
	Gamma1  any            `json:"gamma1"`
	Sigma0  any            `json:"sigma0"`
	Sigma1  any            `json:"sigma1"`
	Zeta    any            `json:"zeta"`
	SigmaZ  any            `json:"sigma_zeta"`
	Verdict window.Verdict `json:"verdict"`
	// Uncertainty is what the reported σ is made of (when measured).
	Uncertainty *estimator.Uncertainty `json:"uncertainty,omitempty"`
}

func main() {
	out := flag.String("out", "docs/paper-results.md", "report to write")
	seeds := flag.Int("seeds", 5, "seeds per cell (1 … N)")
	stressSeeds := flag.Int("stress-seeds", 10, "seeds per cell of the state-consistency stress test (1 … N)")
	only := flag.String("only", "", "run only tables whose name contains this (\"stress\": the stress test alone)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "cells fitted at once")
	plots := flag.String("plots", "", "also draw each cell's first seed (latent, fitted ODE solution, covered levels, crossings) into `DIR`")
	format := flag.String("plot-format", "svg", "format of the -plots figures: svg or png")
	first := flag.Int("first-seed", 1, "the first seed: cells run on seeds first … first+N-1 (held-out seeds for a check)")
	dump := flag.String("dump", "", "also write each fit's estimate and verdict (reasons, alternatives) as a JSON line to `FILE`")
	flag.Parse()
	if *format != "svg" && *format != "png" {
		fmt.Fprintf(os.Stderr, "paper: -plot-format %q: want svg or png\n", *format)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *seeds < 1 || *stressSeeds < 1 {
		fmt.Fprintln(os.Stderr, "paper: -seeds and -stress-seeds must be at least 1")
		os.Exit(2)
	}
	if err := run(ctx, *out, *first, *seeds, *stressSeeds, *only, *workers, *plots, *format, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "paper:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, first, seeds, stressSeeds int, only string, workers int, plots, format, dump string) error {
	if plots != "" {
		if err := os.MkdirAll(plots, 0o755); err != nil {
			return fmt.Errorf("-plots: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "physd-paper")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var cs []cell
	for _, c := range cells() {
		if selected(c, only) {
			c.seeds = seeds
			if c.nuis.Kind != "" {
				c.seeds = stressSeeds
			}
			cs = append(cs, c)
		}
	}
	total := 0
	for _, c := range cs {
		total += c.seeds
	}
	results := make([][]outcome, len(cs))
	type job struct{ i, seed int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				plot := ""
				if plots != "" && j.seed == first {
					plot = filepath.Join(plots, slug(cs[j.i].name())+"."+format)
				}
				o := runCell(ctx, filepath.Join(dir, fmt.Sprintf("w%d", w)), cs[j.i], j.seed, plot)
				mu.Lock()
				results[j.i][j.seed-first] = o
				done++
				if done%20 == 0 {
					fmt.Fprintf(os.Stderr, "paper: %d/%d fits, %s\n", done, total, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cs {
		results[i] = make([]outcome, cs[i].seeds)
	}
feed:
	for i := range cs {
		for s := first; s < first+cs[i].seeds; s++ {
			select {
			case jobs <- job{i, s}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	took := time.Since(start)
	floor, worst, err := scaleFloor(ctx, cs)
	if err != nil {
		return fmt.Errorf("scale floor: %w", err)
	}
	if dump != "" {
		if err := writeDump(dump, cs, results, first); err != nil {
			return fmt.Errorf("-dump: %w", err)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	report(f, cs, results, first, seeds, stressSeeds, took)
	floorSection(f, cs, results, floor, worst)
	fmt.Fprintf(os.Stderr, "paper: wrote %s in %s\n", out, time.Since(start).Round(time.Second))
	return f.Close()
}

// selected says whether the cell is run under -only: its table's name
// contains only, or only is "stress" and the cell is of the stress test.
func selected(c cell, only string) bool {
	return only == "" || strings.Contains(c.table, only) || only == "stress" && c.nuis.Kind != ""
}

// runCell renders the cell's clips with one seed, writes them as H.264,
// reads them back, fits and certifies; with plot set it draws the window
// there.
func runCell(ctx context.Context, dir string, c cell, seed int, plot string) outcome {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return outcome{err: err}
	}
	scenes := c.scenes(seed)
	frames, err := render(ctx, scenes, c.perClip)
	if err != nil {
		return outcome{err: err}
	}
	p, err := estimator.LookupPreset(estimator.DefaultPreset)
	if err != nil {
		return outcome{err: err}
	}
	if c.perClip {
		p.Loss.Offset = estimator.ClipOffsets
	}
	if c.loss != "" && c.loss != estimator.VarFloor {
		// The closed form solves the variance-floor problem; the other
		// objectives are trained from a random readout.
		p.Loss.Reg, p.Steps, p.LREncoder = c.loss, 400, 1e-3
	}
	if c.tau > 0 {
		p.Loss.Tau = c.tau
	}
	var clips []estimator.Clip
	for m, fs := range frames {
		path := filepath.Join(dir, fmt.Sprintf("clip%d.mp4", m))
		if err := sim.WriteMP4(ctx, path, fs, scenes[m].FPS); err != nil {
			return outcome{err: err}
		}
		got, tm, err := stream.ReadFile(ctx, path, stream.FileOptions{Preprocess: stream.Preprocess{Size: p.Size, Binarize: p.Binarize}})
		if err != nil {
			return outcome{err: err}
		}
		clips = append(clips, window.ClipOf(got, 1/tm.FPS))
	}
	// The window analysis physd estimate runs (--reference auto); the
	// ablations measure the encoder's training: its readout alone.
	an, err := analysis.Window(ctx, clips, analysis.Options{Preset: p, Seed: uint64(seed), EncoderOnly: c.loss != "" || c.tau > 0})
	if err != nil {
		if errors.Is(err, analysis.ErrCameraMotion) {
			return outcome{err: err}
		}
		return outcome{err: err, verdict: window.NotCertified}
	}
	r, v := an.Result, an.Verdict
	if plot != "" {
		if err := figure.FromResult(c.name(), r, v).Save(plot); err != nil {
			return outcome{err: err}
		}
	}
	return outcome{g0: r.Gamma0, g1: r.Gamma1, s0: r.Sigma0, s1: r.Sigma1, verdict: v.Status, regime: r.Physics.Regime,
		identified: v.Identified, precision: v.Precision,
		dump: &fitRecord{Cell: c.name(), Seed: seed, Readout: r.Readout, Gamma0: num(r.Gamma0), Gamma1: num(r.Gamma1), Sigma0: num(r.Sigma0), Sigma1: num(r.Sigma1),
			Zeta: num(r.Physics.Zeta), SigmaZ: num(r.Physics.SigmaZ), Verdict: v, Uncertainty: r.Uncertainty}}
}

// num is x for JSON: nil when not finite.
func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// writeDump writes every fit's record, one JSON line each (a fit that
// failed is a line with its cell, seed and error).
func writeDump(path string, cs []cell, results [][]outcome, first int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i, c := range cs {
		for k, o := range results[i] {
			var rec any = o.dump
			if o.dump == nil {
				msg := ""
				if o.err != nil {
					msg = o.err.Error()
				}
				rec = map[string]any{"cell": c.name(), "seed": first + k, "error": msg}
			}
			if err := enc.Encode(rec); err != nil {
				// A σ part that is not finite (no JSON number): the
				// line without the parts.
				if o.dump == nil || o.dump.Uncertainty == nil {
					return err
				}
				d := *o.dump
				d.Uncertainty = nil
				if err := enc.Encode(&d); err != nil {
					return err
				}
			}
		}
	}
	return f.Close()
}

// render draws the scenes through one shared observation map or, with
// perClip, each through its own.
func render(ctx context.Context, scenes []sim.Scene, perClip bool) ([][]*image.Gray, error) {
	if perClip {
		return sim.RenderEach(ctx, scenes)
	}
	frames, _, err := sim.RenderSet(ctx, scenes)
	return frames, err
}

// slug turns a cell's name into a file name: letters, digits and dashes.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.':
			b.WriteRune(r)
			dash = false
		case r == 'π':
			b.WriteString("pi")
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}
