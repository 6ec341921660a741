# agentwork: make demo, make test (the README's two set-up commands).
GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 20s

.PHONY: demo test chaos lint vet fmt-check bench fuzz integration tidy-check dashboards

demo:
	$(GO) run ./examples/research $(ARGS)

test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)
	cd dashboards && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# The long chaos runs of the engine (not part of test, which runs them at a
# scale that finishes in seconds): 1M start/finish churn, 10k owners, 100k
# sends, 10k result waiters, 2,000 cancel/finish races, Close under load.
chaos:
	AGENTWORK_CHAOS=1 $(GO) test -race -count=1 -timeout 60m -run 'Chaos' -v ./work

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

lint: fmt-check vet tidy-check

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseDuration -fuzztime $(FUZZTIME) ./work
	$(GO) test -run '^$$' -fuzz FuzzChildInput -fuzztime $(FUZZTIME) ./middleware
	$(GO) test -run '^$$' -fuzz FuzzWorkToolInput -fuzztime $(FUZZTIME) ./middleware

tidy-check:
	@cp go.mod /tmp/agentwork.go.mod.bak; cp go.sum /tmp/agentwork.go.sum.bak; \
	$(GO) mod tidy; \
	if ! cmp -s go.mod /tmp/agentwork.go.mod.bak || ! cmp -s go.sum /tmp/agentwork.go.sum.bak; then \
		cp /tmp/agentwork.go.mod.bak go.mod; cp /tmp/agentwork.go.sum.bak go.sum; \
		echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; fi

dashboards:
	cd dashboards && $(GO) run ./cmd/gen

integration:
	./.ci/integration
