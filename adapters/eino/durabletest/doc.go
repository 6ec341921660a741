// Package durabletest holds the durable tests of the Eino adapter: an
// Eino agent child (a ChatModelAgent with agentwork's child middleware)
// runs as durable Work on the Temporal runner (an in-process Temporal
// server) and on the Restate runner (a real Restate server), completes
// there, and takes a guidance message and a cancel sent through an Eino
// coordinator's work tool. It is a module of its own, never published,
// so that Eino stays out of the runners' modules and Temporal and Restate
// out of the Eino adapter's.
package durabletest
