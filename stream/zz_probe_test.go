package stream

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gocv.io/x/gocv"
)

func TestZZProbe(t *testing.T) {
	for _, f := range strings.Fields(os.Getenv("PROBE")) {
		vc, err := gocv.VideoCaptureFileWithAPI(f, gocv.VideoCaptureFFmpeg)
		if err != nil {
			fmt.Println(f, err)
			vc.Close()
			continue
		}
		fmt.Printf("== %s fps=%v count=%v posmsec0=%v w=%v\n", f, vc.Get(gocv.VideoCaptureFPS), vc.Get(gocv.VideoCaptureFrameCount), vc.Get(gocv.VideoCapturePosMsec), vc.Get(gocv.VideoCaptureFrameWidth))
		m := gocv.NewMat()
		var s []string
		for i := 0; ; i++ {
			if !vc.Read(&m) {
				ok := false
				for r := 0; r < 5; r++ {
					if vc.Read(&m) {
						s = append(s, fmt.Sprintf("RETRY-OK@%d", r))
						ok = true
						break
					}
				}
				if !ok {
					break
				}
			}
			if m.Empty() {
				s = append(s, "EMPTY")
			}
			s = append(s, fmt.Sprintf("%d:%.2f/%.0f", i, vc.Get(gocv.VideoCapturePosMsec), vc.Get(gocv.VideoCapturePosFrames)))
		}
		fmt.Println(strings.Join(s, " "))
		if os.Getenv("SEEK") != "" {
			vc.Set(gocv.VideoCapturePosMsec, 500)
			s = nil
			for i := 0; i < 5 && vc.Read(&m); i++ {
				s = append(s, fmt.Sprintf("%.2f/%.0f", vc.Get(gocv.VideoCapturePosMsec), vc.Get(gocv.VideoCapturePosFrames)))
			}
			fmt.Println("after seek 500ms:", strings.Join(s, " "))
			vc.Set(gocv.VideoCapturePosFrames, 10)
			s = nil
			for i := 0; i < 5 && vc.Read(&m); i++ {
				s = append(s, fmt.Sprintf("%.2f/%.0f", vc.Get(gocv.VideoCapturePosMsec), vc.Get(gocv.VideoCapturePosFrames)))
			}
			fmt.Println("after seek frame 10:", strings.Join(s, " "))
		}
		m.Close()
		vc.Close()
	}
}
