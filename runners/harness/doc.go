// Package harness is test support for engine implementers, not for
// applications: what a durable engine's multi-process integration driver
// and demo need (runners/temporal/internal/cmd/awtemporal and
// runners/restate/internal/cmd/awrestate use it), written once: child
// processes on 127.0.0.1 with their output in a directory, the
// line-by-line coordinator protocol on both of its sides, and a span file
// that a SIGKILLed process loses nothing of.
//
// The protocol: a coordinator process prints {"ready":true}, then reads
// one command a line (words separated by spaces) and prints one JSON
// answer a line; a failed command answers {"error": code, "detail": text}
// and logs only its code.
package harness
