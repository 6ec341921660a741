// Package durable is what the durable engines (runners/temporal,
// runners/restate) share, written once: an owner's registry (Registry:
// its decisions on admission, transitions, retention, reads and
// detaches, deterministic so that a Temporal workflow applies them as a
// Restate object does), the record it keeps of each Work and its
// projections (Status, the contract's orders, List, Rows, Settled, Live),
// the owner's budget pool, the checks and digests of a guidance message,
// the Subscriptions that poll a registry for notices, a Worker's running
// slots and the deployment Snapshot's cache.
//
// It is internal to this repository: the engines' own modules import it
// (an internal package is visible to every import path under the
// repository's root), users never do. Nothing here talks to a server:
// each engine reads its registry its own way and hands the records over.
package durable
