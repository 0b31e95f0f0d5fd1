//go:build !nocv

package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/physdtest"
)

// checkpointConfig runs one synthetic camera as fast as it renders, with
// a checkpoint after every window, so that a checkpoint is being written
// most of the time.
func checkpointConfig(natsPort int) string {
	return fmt.Sprintf(`log: {level: info, format: json}
http: {listen: ""}
nats: {embedded: {listen: "127.0.0.1:%d", jetstream: false}, jetstream: {enabled: false}}
estimator: {checkpoint_every: 1ms}
cameras:
  - {name: cam, source: {kind: synthetic, synthetic: {realtime: false}}}
`, natsPort)
}

// checkpointOnDisk reads the camera's checkpoint as physd will at its
// next start: the encoder's training steps so far, or an error if it does
// not load.
func checkpointOnDisk(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	l, err := estimator.NewLearner(estimator.LearnerOptions{Preset: mustPreset("edge")})
	if err != nil {
		return 0, err
	}
	if err := l.Load(bytes.NewReader(b)); err != nil {
		return 0, err
	}
	var h struct {
		Steps int64 `json:"steps"`
	}
	line, _ := bufio.NewReader(bytes.NewReader(b)).ReadBytes('\n')
	if err := json.Unmarshal(line, &h); err != nil || h.Steps != l.TotalSteps() {
		return 0, fmt.Errorf("header %q disagrees with the loaded encoder's %d steps", line, l.TotalSteps())
	}
	return l.TotalSteps(), nil
}

func mustPreset(name string) estimator.Preset {
	p, err := estimator.LookupPreset(name)
	if err != nil {
		panic(err)
	}
	return p
}

// TestKillMidCheckpoint kills physd with SIGKILL -chaos.kills times, each
// time the moment a checkpoint's temporary file appears (so mostly in the
// middle of writing it). Every restart must come up, resume the encoder
// from the checkpoint left on disk, and clear the torn temporary file.
func TestKillMidCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(*flagKills)*time.Minute)
	defer cancel()
	dir := t.TempDir()
	physd := physdtest.Build(t, dir, "github.com/physd/physd/cmd/physd")
	cfg := filepath.Join(dir, "physd.yaml")
	if err := os.WriteFile(cfg, []byte(checkpointConfig(physdtest.FreePort(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	camDir := filepath.Join(state, "cameras", "cam")
	ckpt := filepath.Join(camDir, "encoder.ckpt")

	var torn, resumed int
	var steps []int64
	onDisk := int64(-1) // training steps of the checkpoint on disk; -1: none yet
	for i := 0; i <= *flagKills; i++ {
		p := physdtest.Start(t, "physd", physd, []string{"run", "--quiet", "--config", cfg, "--state-dir", state})
		wctx, wcancel := context.WithTimeout(ctx, time.Minute)
		if _, ok := p.Log.Wait(wctx, "physd running", nil); !ok {
			wcancel()
			t.Fatalf("start %d: physd did not come up:\n%s", i+1, tail(p.Log.String()))
		}
		if onDisk >= 0 {
			r, ok := p.Log.Wait(wctx, "encoder restored", nil)
			if !ok {
				wcancel()
				t.Fatalf("start %d: the encoder was not restored from its checkpoint (%d steps):\n%s", i+1, onDisk, tail(p.Log.String()))
			}
			if got := int64(r.Num("steps")); got != onDisk {
				t.Errorf("start %d: restored an encoder trained %d steps, the checkpoint on disk holds %d", i+1, got, onDisk)
			}
			resumed++
		}
		if bad := p.Log.Records("encoder checkpoint is corrupt; set aside, starting cold"); len(bad) > 0 {
			t.Errorf("start %d: a checkpoint was torn: %v", i+1, bad[0])
		}
		if i == *flagKills {
			wcancel()
			if err := p.Stop(30 * time.Second); err != nil {
				t.Error(err)
			}
			break
		}
		// Let the encoder move on past the checkpoint it resumed from, then
		// kill the moment the next checkpoint write has begun.
		for {
			if v, err := checkpointOnDisk(ckpt); err == nil && v > onDisk {
				break
			}
			if wctx.Err() != nil {
				wcancel()
				t.Fatalf("start %d: no checkpoint past %d steps within a minute:\n%s", i+1, onDisk, tail(p.Log.String()))
			}
			time.Sleep(20 * time.Millisecond)
		}
		killed := false
		for !killed {
			if wctx.Err() != nil {
				wcancel()
				t.Fatalf("start %d: no checkpoint write seen within a minute:\n%s", i+1, tail(p.Log.String()))
			}
			if temps(camDir) > 0 {
				p.Kill()
				killed = true
			}
		}
		wcancel()
		if temps(camDir) > 0 {
			torn++
		}
		v, err := checkpointOnDisk(ckpt)
		if err != nil {
			t.Fatalf("kill %d: the checkpoint left on disk does not load: %v", i+1, err)
		}
		if v <= onDisk {
			t.Errorf("kill %d: the checkpoint on disk holds %d steps, not more than %d", i+1, v, onDisk)
		}
		onDisk = v
		steps = append(steps, v)
	}
	if n := temps(camDir); n > 0 {
		t.Errorf("%d temporary files left after the last clean start", n)
	}
	fmt.Printf("\n== chaos: physd killed with SIGKILL %d× as a checkpoint write began ==\n", *flagKills)
	fmt.Printf("kills that left a torn temporary file   %d of %d\n", torn, *flagKills)
	fmt.Printf("restarts that came up                   %d of %d\n", *flagKills, *flagKills)
	fmt.Printf("restarts that resumed the checkpoint    %d of %d\n", resumed, *flagKills)
	fmt.Printf("encoder steps in the checkpoint         %v\n", steps)
	if torn == 0 {
		t.Errorf("no kill landed during a checkpoint write: the test tested nothing")
	}
}

// temps counts writeAtomic's temporary files in dir.
func temps(dir string) int {
	es, _ := os.ReadDir(dir)
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
			n++
		}
	}
	return n
}
