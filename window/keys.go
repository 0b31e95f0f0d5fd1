package window

import (
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/frame"
)

// KeysOf are the indices of frames' key frames (frame.Frame.Key), as
// estimator.Clip.Keys holds them, and whether they were guessed from the
// pictures (frame.Frame.KeyGuessed). keys is nil when no frame's type is
// known or guessed: the source does not tell them.
func KeysOf(frames []frame.Frame) (keys []int, guessed bool) {
	told := false
	for _, f := range frames {
		told = told || f.KeyKnown || f.KeyGuessed
		guessed = guessed || f.KeyGuessed
	}
	if !told {
		return nil, false
	}
	keys = []int{}
	for i, f := range frames {
		if f.Key {
			keys = append(keys, i)
		}
	}
	return keys, guessed
}

// keyFrames are a window's key frames as the impulse test reads them:
// per latent sequence of an estimate, which of its samples are key
// frames.
type keyFrames struct {
	at      [][]bool // at[m][k]: sample k of sequence m is a key frame; nil: none known
	guessed bool
}

// keyFramesOf maps r's key frames (Result.Keys, per clip) onto its latent
// sequences (Result.Clips and Result.First place them in their clips).
// A sequence in which at least half the samples are key frames is intra
// coded throughout (MJPEG, raw video): its frames are all coded alike,
// no key frame stands out, and none is set aside.
func keyFramesOf(r *estimator.Result) keyFrames {
	if r == nil || r.Keys == nil {
		return keyFrames{}
	}
	kf := keyFrames{at: make([][]bool, len(r.Latents)), guessed: r.KeysGuessed}
	for m, z := range r.Latents {
		c, first := m, 0
		if r.Clips != nil && m < len(r.Clips) {
			c = r.Clips[m]
		}
		if r.First != nil && m < len(r.First) {
			first = r.First[m]
		}
		if c < 0 || c >= len(r.Keys) || r.Keys[c] == nil {
			continue
		}
		at := make([]bool, len(z))
		n := 0
		for _, i := range r.Keys[c] {
			if k := i - first; k >= 0 && k < len(z) {
				at[k] = true
				n++
			}
		}
		if 2*n < len(z) {
			kf.at[m] = at
		}
	}
	return kf
}

// near reports whether a key frame lies within one sample of sample k of
// sequence m. A key frame at j steps the picture between samples j−1
// and j, which puts a second difference into c_{j−1} and c_j, and a
// picture sharper than its neighbours into c_{j+1} too.
func (kf keyFrames) near(m, k int) bool {
	if m >= len(kf.at) || kf.at[m] == nil {
		return false
	}
	at := kf.at[m]
	for j := max(0, k-1); j <= min(len(at)-1, k+1); j++ {
		if at[j] {
			return true
		}
	}
	return false
}

// withKeys is r with the window's key frames lent from enc, the encoder
// fit of the same clips, when r has none of its own (a readout fitted
// from latents alone: a followed object, the small-motion readout); r
// itself otherwise. r is not modified.
func withKeys(r, enc *estimator.Result) *estimator.Result {
	if r == nil || enc == nil || r == enc || r.Keys != nil || enc.Keys == nil {
		return r
	}
	c := *r
	c.Keys, c.KeysGuessed = enc.Keys, enc.KeysGuessed
	return &c
}
