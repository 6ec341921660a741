// Package work is the agentwork engine: a process-local Supervisor that runs
// background Work for owners (agent instances) and keeps each Work's
// lifecycle, result, guidance mailbox and limits.
//
// The engine knows nothing of langchaingo, OpenTelemetry or JSON tool
// plumbing; it imports only the standard library. Everything it holds is
// process-local: process exit loses it.
//
// # Lifecycle
//
// A Work is created queued, becomes running when a running slot is free,
// and ends in exactly one terminal state:
//
//	queued           -> running | cancelled
//	running          -> completed | failed | cancel-requested
//	cancel-requested -> completed | failed | cancelled
//
// Terminal states (completed, failed, cancelled) are final. Every state change
// goes through one transition function that refuses any other edge.
//
// # Content
//
// Child output, failure text and guidance text are held only where the
// contract needs them (a completed Work's output until it is evicted, queued
// guidance until the child drains it) and never reach an Observer, a Status,
// a Row or an error message. Failures are visible only as a state and a
// low-cardinality error class.
package work
