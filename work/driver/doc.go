// Package driver is for engine implementers, not applications: what a
// durable engine (runners/temporal, runners/restate) needs to keep the
// contract of package work without writing any of its rules again. It
// holds, written once: an owner's registry (Registry: its decisions on
// admission, transitions, retention, reads and detaches, deterministic so
// that a Temporal workflow applies and replays them as a Restate virtual
// object does), the record it keeps of each Work and its projections
// (Status, the contract's orders, List, Rows, Settled, Live), the owner's
// budget pool (Pool, BudgetDims), the checks and digests of a guidance
// message, each Work's update log (UpdateLog, its state as plain data),
// the Subscriptions that poll a registry for notices, a Worker's running
// slots and its Observer's watch (Watching), the child run it hands an
// Execution (Remote, WithRemote) and the classification of its return, the
// deployment Snapshot's cache and assembly (Cache, DeploymentSnapshot),
// work's options with the in-process meaning (ResolveLimits, Limits), and
// work's errors across a process boundary (DecodeError, Detail, Wrap,
// UpdateRefusal).
//
// Nothing here talks to a server: each engine reads its registry its own
// way and hands the records over. Applications use package work; this
// package's API may change with any minor version until v1.
package driver
