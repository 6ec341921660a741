module github.com/agentwork/agentwork/tools/release

go 1.26.0

require golang.org/x/mod v0.42.0

require github.com/agentwork/agentwork v0.1.0

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0
)

replace github.com/agentwork/agentwork => ../..
