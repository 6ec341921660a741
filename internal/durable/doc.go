// Package durable is what the durable engines (runners/temporal,
// runners/restate) share on their client side, written once: the record
// an owner's registry keeps of each Work and its projections (Status, the
// contract's orders, List, Settled, Live), the owner's budget pool, the
// checks and digests of a guidance message, and the Subscriptions that
// poll a registry for notices.
//
// It is internal to this repository: the engines' own modules import it
// (an internal package is visible to every import path under the
// repository's root), users never do. Nothing here talks to a server:
// each engine reads its registry its own way and hands the records over.
package durable
