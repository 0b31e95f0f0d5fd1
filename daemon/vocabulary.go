package daemon

import (
	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// Vocabulary returns the names a configuration may use that the estimator
// and the simulator own: estimator.PresetNames(), the three simulated
// systems, sim.Regimes() and the rendered size bounds sim.MinSize and
// sim.MaxSize. physd loads its configuration with it
// (config.LoadWith(path, daemon.Vocabulary())), and New checks a Config
// against it. Each call returns new slices.
func Vocabulary() config.Vocabulary {
	regimes := sim.Regimes()
	names := make([]string, len(regimes))
	for i, r := range regimes {
		names[i] = string(r)
	}
	return config.Vocabulary{
		Presets: estimator.PresetNames(),
		Systems: []string{string(sim.SystemPendulum), string(sim.SystemIntensity), string(sim.SystemScale)},
		Regimes: names,
		MinSize: sim.MinSize,
		MaxSize: sim.MaxSize,
	}
}
