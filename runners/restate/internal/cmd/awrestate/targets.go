package main

import (
	"log/slog"

	"github.com/agentwork/agentwork/runners/harness"
	"github.com/agentwork/agentwork/runners/restate"
)

// The targets' canaries: content that may reach the Work's own journal and
// state in Restate (its input and result), guidance only until the child
// took it, and nothing else.
const (
	CanaryInput    = "CANARY-INPUT-7c3a"
	CanaryOutput   = "CANARY-OUTPUT-7c3a"
	CanaryFailure  = "CANARY-FAILURE-7c3a"
	CanaryGuidance = "CANARY-GUIDANCE-7c3a"
)

// Digest is how a slow child reports the guidance it took (harness.Digest).
func Digest(msgs []string) string { return harness.Digest(msgs) }

// targets are a service process's children (harness.Children: slow and
// deaf are agents); name is the process's.
func targets(name string, log *slog.Logger) map[string]restate.Child {
	t := map[string]restate.Child{}
	for label, c := range harness.Children(name, harness.Canaries{Input: CanaryInput, Output: CanaryOutput, Failure: CanaryFailure}, log) {
		t[label] = restate.Child{Kind: c.Kind, Run: c.Run}
	}
	return t
}
