package stream

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZReadFile(t *testing.T) {
	for _, f := range strings.Fields(os.Getenv("PROBE2")) {
		fr, tm, err := ReadFile(context.Background(), f, FileOptions{})
		fmt.Printf("== %s: n=%d err=%v\n   %+v\n", f, len(fr), err, tm)
		if len(fr) > 0 {
			fmt.Println("   last times:", fr[len(fr)-1].Time, fr[len(fr)-2].Time, fr[0].W, fr[0].H)
		}
	}
}
