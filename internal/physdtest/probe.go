package physdtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Probe is what ffprobe and ffmpeg read of a video file: its duration
// (the container's, edit lists applied), the frames it decodes and what
// ffmpeg prints while decoding them all ("" when clean).
type Probe struct {
	Duration float64
	Frames   int
	Errors   string
}

// ProbeVideo reads path's first video stream with ffprobe (duration,
// frames counted by decoding) and decodes it once more with ffmpeg for
// its errors.
func ProbeVideo(path string) (Probe, error) {
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "format=duration:stream=nb_read_frames", "-of", "json", path).CombinedOutput()
	if err != nil {
		return Probe{}, fmt.Errorf("ffprobe %s: %w: %s", path, err, out)
	}
	var v struct {
		Format  struct{ Duration string }
		Streams []struct {
			NbReadFrames string `json:"nb_read_frames"`
		}
	}
	if err := json.Unmarshal(out, &v); err != nil || len(v.Streams) != 1 {
		return Probe{}, fmt.Errorf("ffprobe %s: %v: %s", path, err, out)
	}
	var p Probe
	p.Duration, _ = strconv.ParseFloat(v.Format.Duration, 64)
	p.Frames, _ = strconv.Atoi(v.Streams[0].NbReadFrames)
	dec, _ := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
	p.Errors = strings.TrimSpace(string(dec))
	return p, nil
}
