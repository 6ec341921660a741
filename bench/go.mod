module github.com/agentwork/agentwork/bench

go 1.26.0

require (
	github.com/agentwork/agentwork v0.0.0
	github.com/sourcegraph/conc v0.3.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.23.0
)

require go.uber.org/multierr v1.11.0 // indirect

replace github.com/agentwork/agentwork => ..
