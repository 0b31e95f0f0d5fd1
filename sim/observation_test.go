package sim

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestClipRendererMatchesRenderSet checks that rendering the clips of a set
// one frame at a time through ObservationFor gives RenderSet's frames.
func TestClipRendererMatchesRenderSet(t *testing.T) {
	for _, sys := range []System{SystemPendulum, SystemIntensity, SystemScale} {
		for _, nz := range []Nuisance{{}, {Kind: NuisanceClutter, Level: 3}, {Kind: NuisanceJitter, Level: 2}} {
			a := Scene{System: sys, Gamma1: 0.08, Gamma0: 4.0016, Z0: 0.4, V0: 0, Duration: 1.5, Seed: 3, Nuisance: nz}
			if sys == SystemPendulum {
				a.Z0 = 50
			}
			b, c := a, a
			b.V0, b.Seed = -200, 4
			c.V0, c.Seed = 200, 5
			scenes := []Scene{a, b, c}
			want, zs, err := RenderSet(context.Background(), scenes)
			if err != nil {
				t.Fatal(err)
			}
			obs, err := ObservationFor(scenes)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(scenes) - 1; i >= 0; i-- { // any order
				r, err := NewClipRenderer(scenes[i], obs)
				if err != nil {
					t.Fatal(err)
				}
				if r.Len() != len(want[i]) {
					t.Fatalf("%s clip %d: Len %d, want %d", sys, i, r.Len(), len(want[i]))
				}
				z := r.State()
				for k := r.Len() - 1; k >= 0; k-- {
					if z[k] != zs[i][k] {
						t.Fatalf("%s clip %d: z[%d] = %v, want %v", sys, i, k, z[k], zs[i][k])
					}
					if !bytes.Equal(r.Frame(k).Pix, want[i][k].Pix) {
						t.Fatalf("%s %v clip %d frame %d differs from RenderSet", sys, nz, i, k)
					}
				}
			}
		}
	}
}

func TestClipRendererErrors(t *testing.T) {
	s := Scene{System: SystemIntensity, Gamma0: 4, Z0: 0.4, Duration: 1}
	obs, err := ObservationFor([]Scene{s})
	if err != nil {
		t.Fatal(err)
	}
	bad := s
	bad.System = SystemScale
	if _, err := NewClipRenderer(bad, obs); !errors.Is(err, ErrInvalidScene) {
		t.Errorf("other system: %v", err)
	}
	bad = s
	bad.Size = 32
	if _, err := NewClipRenderer(bad, obs); !errors.Is(err, ErrInvalidScene) {
		t.Errorf("other size: %v", err)
	}
	bad = s
	bad.FPS = -1
	if _, err := NewClipRenderer(bad, obs); !errors.Is(err, ErrInvalidScene) {
		t.Errorf("invalid scene: %v", err)
	}
	o := obs
	o.Lo, o.Hi = 1, 0
	if _, err := NewClipRenderer(s, o); err == nil {
		t.Error("reversed range: no error")
	}
	if _, err := ObservationFor(nil); err == nil {
		t.Error("no scenes: no error")
	}
	var se *SceneError
	if _, err := ObservationFor([]Scene{s, bad}); !errors.As(err, &se) || se.Index != 1 {
		t.Errorf("bad second scene: %v", err)
	}
}
