// Package roi finds where a video oscillates, and the crop and resolution
// physd's estimator should see it at: the automatic region of interest.
//
// A camera watching a pendulum, a cart or a cable sees mostly things that
// do not oscillate — a wall, a desk, a person typing, a hand that releases
// the object, a passer-by, an exposure change. The estimator's encoder
// reads whatever varies in its frames, so it must be shown the oscillator
// and as little else as possible. Find looks for what operational modal
// analysis calls a mode: motion concentrated at one frequency, shared by a
// connected part of the picture, and present throughout the window.
//
// # The method
//
// The segment is decoded once at low resolution: frames are area-resized
// (aspect kept) to about GridSize² blocks, so each grid cell is the mean of
// a block of source pixels (8×8 for 640×480). For each block:
//
//  1. Global changes are removed frame by frame. Each frame is fitted, over
//     all blocks, by a + g·m + u·∂m/∂x + v·∂m/∂y, m the window's mean
//     image: a and g absorb exposure and lighting changes, u and v a small
//     shift of the whole picture (camera shake, to first order). The fit is
//     robust (blocks beyond 3 robust σ are dropped, three times), so a
//     moving object that covers less than half of the picture is not
//     absorbed; the shift terms are ridge-shrunk so that a plain scene,
//     whose gradient lives only on the object, cannot explain the object.
//     The residual is detrended (a line per block).
//  2. Its periodogram (Hann window) is whitened by the block's own noise
//     floor: the median of its periodogram over a band around each
//     frequency (±25 %, at least ±8 and at most ±32 bins of 1/T), which follows drift and coloured
//     noise, so a peak counts by how far it stands above its surroundings,
//     not by its power. Under noise the whitened value is Exp(1).
//  3. The scene's spectrum is the sum over blocks of max(0, ln(SNR/4)):
//     a frequency scores by how many blocks hold a clear peak at it and how
//     clear, not by one bright block. Its highest local maxima, between
//     three periods in the window and 0.4 × the frame rate, are the
//     candidates (at most four).
//  4. For each candidate f, each block gets its excess power at f, 2f and
//     3f (a block in the middle of a swing sees the object pass twice a
//     period), and three tests: significance (a whitened peak ≥ 10 at one
//     of the harmonics: e⁻¹⁰ by chance), persistence (the window is cut
//     into K = 3…6 sub-segments of at least 1.5 periods each, and the
//     harmonics at f must explain the block's detrended variance in at
//     least ⌈2K/3⌉ of them, beyond what noise explains with the same
//     number of regressors with 4σ to spare — a hand, a passer-by or a
//     shadow lives in one part of the window), and strength (excess power
//     ≥ 3 % of the strongest significant, persistent block).
//  5. Blocks that pass form clusters (blocks within two cells of each other
//     join); the cluster with the most excess power is the candidate's
//     region. A candidate whose cluster carries less than a fifth of its
//     power at f itself is a subharmonic and is dropped.
//  6. The candidate with the most cluster power wins. Its box, padded by
//     max(1.5 cells, 10 % of its longer side) on each side and clipped to
//     the frame, is the crop; its aspect ratio is kept by the resize
//     (stream.Preprocess.OutputSize), at the preset's pixel budget, or at
//     the crop's own size when that is smaller (no enlargement).
//  7. When no candidate passes over the whole clips, steps 1–6 run again
//     on their leading half, quarter… while it lasts LeadingMin: a free
//     decay that dies into the noise early in the window is persistent
//     over the span it lives in (Result.LeadingS), a passer-by over none.
//
// A scene where no candidate passes is an error wrapping ErrNoOscillation
// that says what the best candidate lacked; Find never returns a region it
// did not find.
//
// Why not the alternatives. Frame differencing or optical-flow magnitude
// find any motion, the hand and the passer-by included; the frequency and
// the persistence tests are what separate a mode from an event. Phase-based
// motion (complex steerable pyramids) measures sub-pixel motion better,
// but the estimator does that part; the search only needs where, and
// block means already respond to an edge moving through a block. The cross-
// spectral matrix of frequency-domain decomposition would give mode shapes,
// but its blocks × blocks size is out of reach on a board and the region
// needs only the power per block.
package roi
