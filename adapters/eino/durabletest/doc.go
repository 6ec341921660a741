// Package durabletest holds the durable tests of the Eino adapter: an
// Eino agent child (a ChatModelAgent with agentwork's child middleware)
// runs as durable Work on the Restate runner (a real Restate server, this
// package's test) and on the Temporal runner (the Temporal CLI's dev
// server, package ./temporal), completes there, and takes a guidance
// message and a cancel sent through an Eino coordinator's work tool. Test
// is the scenario both run.
//
// It is a module of its own, never published, so that Eino stays out of
// the runners' modules and Temporal and Restate out of the Eino
// adapter's (make test-eino-durable).
package durabletest
