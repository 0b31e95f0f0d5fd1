package wire

// State is a camera's or a zone's state in its status heartbeat
// (Status.State; docs/schema/status.v1.json lists them).
type State string

// The states of a camera's source, and so of its lines.
const (
	// StateStarting: the source is being opened.
	StateStarting State = "starting"
	// StateWaiting: a whip camera that has had no publisher yet.
	StateWaiting State = "waiting"
	// StateOnline: frames arrive.
	StateOnline State = "online"
	// StateOffline: the source failed; it is retried.
	StateOffline State = "offline"
	// StateEnded: a finite source (a file) reached its end.
	StateEnded State = "ended"
	// StateStopped: the camera was stopped (the daemon shuts down, or the
	// camera left the configuration).
	StateStopped State = "stopped"
)

// AlertState says whether an alert is raised or cleared (Alert.State).
type AlertState string

// The states of an alert.
const (
	// AlertRaised: f_n or ζ drifted beyond the limits.
	AlertRaised AlertState = "raised"
	// AlertCleared: they came back within the limits.
	AlertCleared AlertState = "cleared"
)
