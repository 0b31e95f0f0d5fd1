package sim

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// Observation is an observation map fixed ahead of rendering: what
// RenderSet computes jointly over its scenes, made explicit so that clips
// rendered one at a time — for example the events of an endless synthetic
// camera stream — are drawn through one and the same map, exactly as the
// clips of one RenderSet call are.
type Observation struct {
	// System and Size are the system and frame side (defaults applied)
	// the map draws; scenes rendered through it must match them.
	System System
	Size   int
	// Lo and Hi are the range of z mapped affinely onto the gray-level
	// range (intensity) or the radius range (scale). A state outside the
	// range is clamped to it; an empty range (Lo = Hi) maps every state to
	// the middle. The pendulum ignores them: its angle is drawn directly.
	Lo, Hi float64
	// ShapeSeed seeds the polygon of the intensity system (RenderSet uses
	// scenes[0].Seed). Nuisances still come from each scene's own Seed.
	ShapeSeed int64
}

// ObservationFor returns the observation map that RenderSet(ctx, scenes)
// uses: the range of z over all the scenes' frames and the polygon seed of
// scenes[0]. The scenes are validated as by RenderSet (same system and
// size; errors name scenes[i]). Rendering scenes[i] with NewClipRenderer
// and this map gives exactly the frames of RenderSet's clip i.
func ObservationFor(scenes []Scene) (Observation, error) {
	if len(scenes) == 0 {
		return Observation{}, errors.New("sim: ObservationFor needs at least one scene")
	}
	first := scenes[0].withDefaults()
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range scenes {
		if err := s.Validate(); err != nil {
			var se *SceneError
			if errors.As(err, &se) {
				se.Index = i
				return Observation{}, se
			}
			return Observation{}, fmt.Errorf("sim: scenes[%d]: %w", i, err)
		}
		d := s.withDefaults()
		if d.System != first.System {
			return Observation{}, &SceneError{Index: i, Field: "System",
				Msg: fmt.Sprintf("is %q but scenes[0] is %q; a set must share one system", d.System, first.System)}
		}
		if d.Size != first.Size {
			return Observation{}, &SceneError{Index: i, Field: "Size",
				Msg: fmt.Sprintf("is %d but scenes[0] is %d; a set must share one frame size", d.Size, first.Size)}
		}
		t := d.Times()
		z, _ := Solve(d.Gamma1, d.Gamma0, d.Z0, d.V0, t)
		for k, v := range z {
			if !finite(v) {
				return Observation{}, fmt.Errorf("sim: scenes[%d]: state z is %v at t = %v s (frame %d); the solution diverges", i, v, t[k], k)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return Observation{System: first.System, Size: first.Size, Lo: lo, Hi: hi, ShapeSeed: first.Seed}, nil
}

// ClipRenderer renders the frames of one clip one at a time, through a
// fixed observation map, so that a long clip never has to be held in
// memory. Frame k is the same image whatever order frames are asked in,
// and equals frame k of RenderSet for the scenes the map was made from.
// A ClipRenderer is not safe for concurrent use.
type ClipRenderer struct {
	scene          Scene // defaults applied
	z              []float64
	obs            *observer
	nz             *nuisance
	c              *canvas
	tmp            []float64
	bg, distractor float64
}

// NewClipRenderer prepares the clip of s drawn through obs: it solves the
// ODE at the frame times and precomputes the nuisance. It returns an error
// if s is invalid (see Scene.Validate), if its system or size (after
// defaults) differ from the map's, if the map's range is not finite, or if
// the state is not finite at some frame.
func NewClipRenderer(s Scene, obs Observation) (*ClipRenderer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	d := s.withDefaults()
	if d.System != obs.System {
		return nil, fieldErr("System", "is %q but the observation map draws %q", d.System, obs.System)
	}
	if d.Size != obs.Size {
		return nil, fieldErr("Size", "is %d but the observation map draws %d×%d frames", d.Size, obs.Size, obs.Size)
	}
	if obs.System != SystemPendulum && (!finite(obs.Lo) || !finite(obs.Hi) || obs.Lo > obs.Hi) {
		return nil, fmt.Errorf("sim: observation range [%v, %v] is not a finite interval", obs.Lo, obs.Hi)
	}
	t := d.Times()
	z, _ := Solve(d.Gamma1, d.Gamma0, d.Z0, d.V0, t)
	for k, v := range z {
		if !finite(v) {
			return nil, fmt.Errorf("sim: state z is %v at t = %v s (frame %d); the solution diverges", v, t[k], k)
		}
	}
	o := newObserver(Scene{System: obs.System, Size: obs.Size, Seed: obs.ShapeSeed}, obs.Lo, obs.Hi)
	r := &ClipRenderer{scene: d, z: z, obs: o, nz: newNuisance(d, len(z)), c: newCanvas(d.Size)}
	r.tmp = make([]float64, len(r.c.px))
	r.bg, r.distractor = o.background()
	return r, nil
}

// Len returns the number of frames of the clip, Scene.Frames().
func (r *ClipRenderer) Len() int { return len(r.z) }

// State returns a copy of the true state z_k at every frame time.
func (r *ClipRenderer) State() []float64 { return append([]float64(nil), r.z...) }

// Frame renders frame k, 0 ≤ k < Len(), as a new image. It panics if k is
// out of range.
func (r *ClipRenderer) Frame(k int) *image.Gray {
	c := r.c
	c.fill(r.bg)
	for _, q := range r.nz.squares(k) {
		c.paintRect(q, r.distractor)
	}
	r.obs.draw(c, r.z[k])
	r.nz.light(c, k)
	if dx, dy := r.nz.offset(k); dx != 0 || dy != 0 {
		c.shift(dx, dy, r.bg, r.tmp)
	}
	return c.gray()
}
