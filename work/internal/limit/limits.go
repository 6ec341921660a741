package limit

import (
	"time"

	"github.com/agentwork/agentwork/work/observe"
)

// Limits is an engine's effective configuration, as work's options set
// it: the in-process engine's, and a durable engine's (work/driver's
// ResolveLimits). MaxDuration is the default per-Work deadline (0: none).
type Limits struct {
	MaxRunning     int
	MaxOutstanding int
	MaxStarts      int
	MaxDepth       int
	MaxDuration    time.Duration
	MaxResultBytes int
	RetainTerminal int
	RetainAge      time.Duration

	MaxMessageBytes        int
	MaxQueuedGuidance      int
	MaxQueuedGuidanceBytes int
	MaxCommandRecords      int

	// Observer is WithObserver's (observe.NopObserver when none was given).
	Observer observe.Observer

	// The deployment view: WithDeploymentGauges sets ExportDeployment
	// and DeploymentTargets; SnapshotInterval and StatusRows are
	// WithSnapshotInterval's and WithStatusRows'.
	ExportDeployment  bool
	DeploymentTargets []string
	SnapshotInterval  time.Duration
	StatusRows        int
}
