package window

import (
	"math"
	"time"

	"github.com/physd/physd/frame"
)

// EventOptions configure an EventCutter.
type EventOptions struct {
	// Threshold is the Motion (mean frame-to-frame change beyond the noise
	// floor, gray levels in [0,1]) above which the scene counts as moving.
	// Default 1e-4: a 3-pixel bob moving a quarter pixel per frame in a
	// 64×64 frame reads about 1e-3.
	Threshold float64
	// Quiet ends an event: this long below Threshold.
	Quiet time.Duration
	// MaxLength ends an event that goes on longer.
	MaxLength time.Duration
	// MinFrames is the shortest event kept.
	MinFrames int
}

// Event is one excitation: motion that starts (a knock, a release) and
// decays, as one trajectory of the multi-trajectory theorem.
type Event struct {
	Frames []frame.Frame
}

// EventCutter cuts a frame stream into excitation events for the
// multi-trajectory mode. An event opens at the first frame that differs
// from its predecessor (the predecessor is left out: before a release it
// shows the old state, not the start of the new trajectory) and closes after Quiet without motion, at MaxLength, or at a break in
// the stream; the quiet tail is trimmed.
type EventCutter struct {
	opt       EventOptions
	prev      *frame.Frame
	cur       []frame.Frame
	lastMove  time.Duration
	inEvent   bool
	moveCount int
}

// NewEventCutter returns a cutter with defaults filled in.
func NewEventCutter(opt EventOptions) *EventCutter {
	if opt.Threshold <= 0 {
		opt.Threshold = 1e-4
	}
	if opt.Quiet <= 0 {
		opt.Quiet = time.Second
	}
	if opt.MaxLength <= 0 {
		opt.MaxLength = 10 * time.Second
	}
	if opt.MinFrames <= 0 {
		opt.MinFrames = 8
	}
	return &EventCutter{opt: opt}
}

// Motion is the mean, over pixels, of the absolute difference between two
// frames beyond a noise floor of 3 gray levels: sensor and codec noise
// change every pixel a little, a moving edge changes few pixels a lot.
func Motion(a, b frame.Frame) float64 {
	if len(a.Pix) != len(b.Pix) || len(a.Pix) == 0 {
		return math.Inf(1)
	}
	const floor = 3.0 / 255
	var s float64
	for i, v := range a.Pix {
		s += math.Max(0, math.Abs(v-b.Pix[i])-floor)
	}
	return s / float64(len(a.Pix))
}

// Push adds a frame and returns an event when one closes.
func (c *EventCutter) Push(f frame.Frame, brk bool) *Event {
	var out *Event
	if brk && c.inEvent {
		out = c.close()
	}
	if c.prev == nil || brk {
		fc := f
		c.prev = &fc
		return out
	}
	moving := Motion(*c.prev, f) > c.opt.Threshold
	switch {
	case !c.inEvent && moving:
		c.inEvent = true
		c.cur = append(c.cur[:0], f)
		c.lastMove = f.Time
		c.moveCount = len(c.cur)
	case c.inEvent:
		c.cur = append(c.cur, f)
		if moving {
			c.lastMove = f.Time
			c.moveCount = len(c.cur)
		}
		if f.Time-c.lastMove >= c.opt.Quiet || f.Time-c.cur[0].Time >= c.opt.MaxLength {
			out = c.close()
		}
	}
	fc := f
	c.prev = &fc
	return out
}

func (c *EventCutter) close() *Event {
	c.inEvent = false
	n := c.moveCount
	frames := c.cur[:n:n]
	c.cur = nil
	if n < c.opt.MinFrames {
		return nil
	}
	return &Event{Frames: frames}
}
