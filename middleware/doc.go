// Package middleware is the framework-neutral, model-facing half of
// agentwork: the Backgroundable marker, preparation of an agent's tool map
// (wrapped children plus one automatic work tool), run_in_background
// parsing, the work tool's JSON contract, the boundary status block and
// guidance delivery. It imports only the standard library and work.
package middleware
