package driver

import "github.com/agentwork/agentwork/work"

// Exhausted returns what the run of ex refused (Classify reads it).
func Exhausted(ex *work.Execution) (budget string, refused bool) { return exhausted(ex) }
