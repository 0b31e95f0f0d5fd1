package tracker

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/par"
)

// streamWindows cuts a 300-frame stream of a damped disc into 121-frame
// windows one 30-frame hop apart.
func streamWindows() (frames [][]float64, starts []int) {
	const dt = 1.0 / 30
	ys := damped(300, dt, 30, 12, 0.4, 30)
	frames = scene(60, 60, 4, 30, ys, 0.01, 3)
	// A passer-by hides the disc for frames 150–169: the windows that
	// hold them look for it again after, and those scans are cached.
	cover(frames, 60, 0, 60, 150, 170)
	for s := 0; s+121 <= len(frames); s += 30 {
		starts = append(starts, s)
	}
	return frames, starts
}

// Follow with a Cache, window after window of a stream, finds bitwise the
// paths it finds when every match is searched afresh (the same seeds,
// which a stream's windows take from the first window that held the
// frame), and most matches come from the cache.
func TestCacheMatchesSearch(t *testing.T) {
	frames, starts := streamWindows()
	ctx := context.Background()
	c := NewCache()
	reacquired := 0
	for _, s := range starts {
		clips := []estimator.Clip{{W: 60, H: 60, Frames: frames[s : s+121], Dt: 1.0 / 30}}
		// Afresh: a cache holding only the seeds found so far.
		fresh := NewCache()
		fresh.seeded, fresh.calls = c.seeded.Clone(), c.calls
		want, werr := Follow(ctx, clips, Options{Stream: Stream{Cache: fresh, First: s, Hop: 30}})
		got, gerr := Follow(ctx, clips, Options{Stream: Stream{Cache: c, First: s, Hop: 30}})
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("window at %d: cached %v (%v), afresh %v (%v)", s, len(got), gerr, len(want), werr)
		}
		if len(got) == 0 {
			t.Fatalf("window at %d: nothing followed: %v", s, gerr)
		}
		if s == 0 {
			c.hits, c.misses = 0, 0 // the first window searches everything
		}
		if len(got[0].Pos) > 1 {
			reacquired++
		}
	}
	// Each later window adds a quarter of its frames and two of its nine
	// seed frames, whose objects are followed through every frame; and
	// the disc seeds a box of another size in most frames (it is
	// followed again from those: Follow's duplicates).
	if 2*c.hits < c.misses {
		t.Errorf("%d matches from the cache, %d searched: the windows share most of their frames", c.hits, c.misses)
	}
	t.Logf("after the first window: %d matches from the cache, %d searched", c.hits, c.misses)
	if reacquired < 2 || c.scans.Len() == 0 {
		t.Errorf("the disc was found again after the passer-by in %d windows, %d scans kept", reacquired, c.scans.Len())
	}
}

// Templates cut from and matched in the frames before exposure
// normalisation (Stream.match) put the object where matching the
// normalised frames does, to rounding: the normalised cross-correlation
// does not see a frame's gain.
func TestFollowMatchIgnoresGain(t *testing.T) {
	frames, _ := streamWindows()
	frames = frames[:121]
	norm := make([][]float64, len(frames))
	for k, f := range frames {
		g := 1 + 0.02*math.Sin(float64(k)/7)
		norm[k] = make([]float64, len(f))
		for j, v := range f {
			norm[k][j] = v / g
		}
	}
	clips := []estimator.Clip{{W: 60, H: 60, Frames: norm, Dt: 1.0 / 30}}
	raw := []estimator.Clip{{W: 60, H: 60, Frames: frames, Dt: 1.0 / 30}}
	ctx := context.Background()
	want, err := Follow(ctx, clips, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Follow(ctx, clips, Options{Stream: Stream{match: raw}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d paths on the frames as they came, %d on the normalised ones", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i].First, want[i].First) || len(got[i].Pos) != len(want[i].Pos) {
			t.Fatalf("path %d: runs %v, normalised %v", i, got[i].First, want[i].First)
		}
		for r := range got[i].Pos {
			for k, q := range got[i].Pos[r] {
				p := want[i].Pos[r][k]
				if math.Abs(q.X-p.X) > 1e-9 || math.Abs(q.Y-p.Y) > 1e-9 {
					t.Fatalf("path %d frame %d: %v, normalised %v", i, k, q, p)
				}
			}
		}
	}
	if _, err := Follow(ctx, clips, Options{Stream: Stream{match: raw[:0]}}); err == nil {
		t.Error("frames to match of another shape were accepted")
	}
}

// One goroutine (par.WithWorkers), following a frame's seeds only when no
// path has them yet, finds the paths several find following them all at
// once; the disc and its passer-by give several seeds a frame.
func TestFollowWorkers(t *testing.T) {
	frames, _ := streamWindows()
	clips := []estimator.Clip{{W: 60, H: 60, Frames: frames[120:241], Dt: 1.0 / 30}}
	var got [][]Path
	for _, n := range []int{3, 1} {
		paths, err := Follow(par.WithWorkers(context.Background(), n), clips, Options{Objects: 3})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, paths)
	}
	if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("three workers: %d paths; one: %d, or they differ", len(got[0]), len(got[1]))
	}
}

// A scan through the cache's scores gives bitwise bestWhere's answer for
// every set of corners — sets that grow, shrink and move across the
// frame — and scores each corner of a frame once.
func TestBestWhereMemoMatchesScan(t *testing.T) {
	const w, h = 40, 30
	frames := scene(w, h, 4, 20, damped(6, 1.0/30, 15, 8, 0.3, 20), 0.02, 5)
	tp := newTemplate(frames[0], w, Box{X: 16, Y: 10, W: 9, H: 9}, nil)
	if tp == nil {
		t.Fatal("flat template")
	}
	tp.cache, tp.key, tp.ids = NewCache(), templateKey(tp), frameIDs(frames)
	nx, ny := w-tp.w+1, h-tp.h+1
	rng := rand.New(rand.NewPCG(3, 4))
	scored := make([]map[int]bool, len(frames))
	for i := range scored {
		scored[i] = map[int]bool{}
	}
	for q := range 60 {
		near := make([]bool, nx*ny)
		// A box of corners somewhere, or (every fifth) all of them.
		x0, y0 := rng.IntN(nx), rng.IntN(ny)
		x1, y1 := x0+1+rng.IntN(nx-x0), y0+1+rng.IntN(ny-y0)
		for y := range ny {
			for x := range nx {
				near[y*nx+x] = q%5 == 4 || x >= x0 && x < x1 && y >= y0 && y < y1
			}
		}
		i := rng.IntN(len(frames))
		wx, wy, ws := tp.bestWhere(frames[i], w, near)
		gx, gy, gs := tp.bestWhereMemo(frames[i], i, w, near, tp.cornersOf(near))
		if gx != wx || gy != wy || math.Float64bits(gs) != math.Float64bits(ws) {
			t.Fatalf("scan %d of frame %d: memo (%d, %d) %v, bestWhere (%d, %d) %v", q, i, gx, gy, gs, wx, wy, ws)
		}
		for c, u := range near {
			if u {
				scored[i][c] = true
			}
		}
		e, _ := tp.cache.scans.Peek(scanKey{template: tp.key, frame: tp.ids[i], w: w})
		if len(e.at) != len(scored[i]) {
			t.Fatalf("scan %d of frame %d: %d corners kept, %d scanned", q, i, len(e.at), len(scored[i]))
		}
	}
}
