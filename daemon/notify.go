package daemon

import (
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// Systemd sends notifications to systemd through $NOTIFY_SOCKET; outside
// systemd it does nothing.
type Systemd struct{}

// Notify sends state (e.g. "READY=1", "WATCHDOG=1").
func (Systemd) Notify(state string) error {
	_, err := sd.SdNotify(false, state)
	return err
}

// WatchdogInterval is how often to ping systemd's watchdog: half of
// WatchdogSec, or 0 when the watchdog is off.
func WatchdogInterval() time.Duration {
	d, err := sd.SdWatchdogEnabled(false)
	if err != nil || d <= 0 {
		return 0
	}
	return d / 2
}
