# agentwork: make demo, make test (the README's two set-up commands).
GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 20s

# One Go toolchain for every module and for CI: the go lines differ (the
# root module keeps the lowest its dependencies allow, runners/temporal
# needs 1.26.8), the toolchain that builds and tests them does not. The go
# command runs itself when it is this version, else fetches it. An
# environment's GOTOOLCHAIN wins (local: the installed go as it is); CI
# (.ci/run) sets this one and checks it (toolchain-check).
GO_TOOLCHAIN := go1.26.8
export GOTOOLCHAIN ?= $(GO_TOOLCHAIN)

# The modules besides the root one (each with a replace of the root to its
# checkout): examples (the demo and the integration test's programs) and
# bench (the engine's Goal and Floor benchmarks with their comparison
# libraries), tools/release (the release's module list, licence and
# version checks, make release-check and make api). test, vet and
# tidy-check cover them; dashboards has its own lines, the runners their
# own targets.
SUBMODS   := examples bench tools/release

.PHONY: security-check copies demo demo-eino test-eino test chaos lint vet fmt-check files-check release-files api api-check staticcheck toolchain-check bench bench-all bench-check fuzz integration tidy-check dashboards

demo:
	cd examples && $(GO) run ./research $(ARGS)

# The research demo on an Eino coordinator (adapters/eino, its own module):
# the scripted model, offline; OPENAI_API_KEY switches to eino-ext's OpenAI
# chat model.
demo-eino:
	cd adapters/eino && $(GO) run ./cmd/research $(ARGS)

# -race needs cgo and a C compiler; without them the tests run without it
# and say so.
RACE := $(shell if [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1; then echo -race; fi)

# vet with the race flag: its compiles of the dependencies are the ones
# the race tests reuse (a cold build compiles them once, not twice).
test: fmt-check
	$(GO) vet $(RACE) $(PKGS)
	@if [ -z "$(RACE)" ]; then echo "note: cgo or a C compiler ($$($(GO) env CC)) is unavailable: running the tests WITHOUT -race (install gcc for the race detector)"; fi
	$(GO) test $(RACE) -count=1 $(PKGS)
	cd examples && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -count=1 ./...
	cd bench && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -count=1 ./...
	cd tools/release && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -count=1 ./...
	cd dashboards && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -count=1 ./...

# The Eino adapter (its own module, adapters/eino: Eino and sonic stay out
# of the root module): vet, tidiness and its tests. Its durable tests are
# test-eino-durable.
test-eino:
	cd adapters/eino && $(GO) vet $(RACE) ./... && { $(GO) mod tidy -diff || { echo "adapters/eino/go.mod/go.sum are not tidy"; exit 1; }; } && $(GO) test $(RACE) -count=1 ./...

# An Eino agent child as durable Work on Temporal (the Temporal CLI's dev
# server, as for test-temporal) and Restate (a real server, installed from
# npm as for test-restate): adapters/eino/durabletest, an unpublished
# module of its own, so that Eino stays out of the runners' modules and
# Temporal and Restate out of the Eino adapter's.
.PHONY: test-eino-durable
test-eino-durable:
	cd adapters/eino/durabletest && $(GO) vet $(RACE) ./... && { $(GO) mod tidy -diff || { echo "adapters/eino/durabletest/go.mod/go.sum are not tidy"; exit 1; }; } && $(GO) test $(RACE) -count=1 -timeout 20m ./...

# The long chaos runs of the engine (not part of test, which runs them at a
# scale that finishes in seconds): 1M start/finish churn, 10k owners, 100k
# sends, 10k result waiters, 2,000 cancel/finish races, Close under load.
chaos:
	AGENTWORK_CHAOS=1 $(GO) test -race -count=1 -timeout 60m -run 'Chaos' -v ./work

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	@set -e; for m in $(SUBMODS); do echo "cd $$m && $(GO) vet ./..."; (cd $$m && $(GO) vet ./...); done

# No binary (non-text) file and no file over 1 MiB is tracked: the root
# module is what a library user downloads.
files-check:
	@./.ci/check-tracked-files

# The go command is the pinned toolchain (.ci/run checks it).
toolchain-check:
	@v=$$($(GO) env GOVERSION) || exit 1; if [ "$$v" != "$(GO_TOOLCHAIN)" ]; then echo "toolchain: $(GO) is $$v, the build pins $(GO_TOOLCHAIN) (GOTOOLCHAIN=$$GOTOOLCHAIN)"; exit 1; fi

lint: fmt-check files-check release-files api-check vet staticcheck tidy-check copies security-check

# staticcheck on every module with Go code (the integration-tagged tests
# included: they use helpers nothing else does), clean. Findings a change
# should not fix carry a //lint:ignore with the reason.
STATICCHECK      := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
STATICCHECK_MODS := . runners/temporal runners/restate adapters/eino examples bench dashboards tools/release
staticcheck:
	@set -e; for m in $(STATICCHECK_MODS); do echo "staticcheck -tags integration ./... (in $$m)"; (cd $$m && $(STATICCHECK) -tags integration ./...); done

# The exported API of every published package, one feature a line, under
# api/ (tools/release/cmd/apirecord): make api rewrites it after an API
# change, for review in the diff; make lint fails while it differs.
api:
	cd tools/release && $(GO) run ./cmd/apirecord -w

api-check:
	cd tools/release && $(GO) run ./cmd/apirecord

# Every published module (tools/release: Published) holds the root LICENSE
# and requires the root at VERSION, with its replace kept for development.
release-files:
	cd tools/release && $(GO) test $(RACE) -count=1 -run '^(TestLicenses|TestRequirements)$$' .

# Code written twice between the durable runners, or between either and
# work/ (issue 34: one rule, one place): runs of six lines or more,
# identical or differing only in names and values. COPIES_MAX is a
# ratchet: it only goes down, to 0.
COPIES_MAX ?= 0
# Every test SECURITY.md names exists (issue 39).
security-check:
	$(GO) run ./internal/cmd/securitycheck SECURITY.md

copies:
	$(GO) run ./internal/cmd/copies -max $(COPIES_MAX) runners/temporal runners/restate work,work/driver,work/observe

# The Goal benchmarks (engine vs goroutine/errgroup/conc, telemetry vs the
# SDK floor, the adapters vs unwrapped langchaingo and Eino), each ratio measured in
# one run and printed as the median of BENCHCOUNT runs beside its goal,
# with the engine goals' contract floors (BenchmarkFloor*, no goal) below
# them. bench-check exits non-zero when a median misses its goal by more
# than the noise margin (none for start + await, at most 4x, and for the
# bytes of a queued Work and of a waiting job, under 1 KiB); it is not part
# of test and not run in CI (shared machines).
BENCHCOUNT  ?= 4
# The Goal and Floor benchmarks live in the bench module (bench/,
# bench/telemetry, bench/langchaingo, bench/eino): their pairing (bench/internal/
# benchpair) and comparison arms are its own, not the root module's.
BENCHPKGS   := . ./telemetry ./langchaingo ./eino
BENCHMARGIN ?= -margin 0.10 -alloc-margin 2
BENCHRUN     = { (cd bench && $(GO) test -run '^$$' -bench '^BenchmarkGoal' -count=$(BENCHCOUNT) $(BENCHPKGS)) && \
	(cd bench && $(GO) test -run '^$$' -bench '^BenchmarkFloor(Start|Await|Throughput)$$/^contract$$/^record=896B$$' -count=$(BENCHCOUNT) .); }

bench:
	$(BENCHRUN) | $(GO) run ./internal/cmd/benchgoals -v $(BENCHMARGIN)

bench-check:
	$(BENCHRUN) | $(GO) run ./internal/cmd/benchgoals -check $(BENCHMARGIN)

# Every benchmark of the tree, once.
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)
	@set -e; for m in $(SUBMODS); do (cd $$m && $(GO) test -run '^$$' -bench . -benchmem -count=1 ./...); done

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseDuration -fuzztime $(FUZZTIME) ./middleware
	$(GO) test -run '^$$' -fuzz FuzzChildInput -fuzztime $(FUZZTIME) ./middleware
	$(GO) test -run '^$$' -fuzz FuzzWorkToolInput -fuzztime $(FUZZTIME) ./middleware
	$(GO) test -run '^$$' -fuzz FuzzDecodeError -fuzztime $(FUZZTIME) ./work
	$(GO) test -run '^$$' -fuzz FuzzUpdateLog -fuzztime $(FUZZTIME) ./work/driver
	$(GO) test -run '^$$' -fuzz FuzzRegistryState -fuzztime $(FUZZTIME) ./work/driver
	cd runners/temporal && $(GO) test -run '^$$' -fuzz FuzzPayload -fuzztime $(FUZZTIME) .
	cd runners/restate && $(GO) test -run '^$$' -fuzz FuzzReply -fuzztime $(FUZZTIME) .
	cd runners/restate && $(GO) test -run '^$$' -fuzz FuzzSealed -fuzztime $(FUZZTIME) .

# go mod tidy -diff changes nothing and exits non-zero with the diff when a
# module is not tidy.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@set -e; for m in $(SUBMODS); do (cd $$m && $(GO) mod tidy -diff) || { echo "$$m/go.mod/go.sum are not tidy: run go mod tidy in $$m"; exit 1; }; done
	@cd dashboards && $(GO) mod tidy -diff || { echo "dashboards/go.mod/go.sum are not tidy: run go mod tidy in dashboards"; exit 1; }

dashboards:
	cd dashboards && $(GO) run ./cmd/gen

integration:
	./.ci/integration

# The release rehearsal (docs/releasing.md): every published module at
# VERSION through a module proxy on disk, installed, built and run by
# consumer modules outside the repository with an empty module cache.
.PHONY: release-check
release-check:
	cd tools/release && $(GO) run ./cmd/releasecheck

# The Temporal runner (its own module, runners/temporal): vet, tidiness,
# then the engine conformance suite and the worker-process tests (SIGKILL
# -> worker_lost, retry) against the Temporal CLI's dev server, a process
# the tests start (runners/temporal/testserver: the temporal binary from
# AGENTWORK_TEMPORAL_CLI, else built once from tools/temporal into
# .cache/temporal/<key>: minutes on a cold build cache, once).
.PHONY: test-temporal
test-temporal:
	cd runners/temporal && $(GO) vet $(RACE) ./... && { $(GO) mod tidy -diff || { echo "runners/temporal/go.mod/go.sum are not tidy"; exit 1; }; } && $(GO) test $(RACE) -count=1 -timeout 30m ./...

# The Restate runner (its own module, runners/restate): vet, tidiness,
# then the engine conformance suite against a real Restate server that the
# tests start (restatetest: the restate-server binary from
# AGENTWORK_RESTATE_SERVER, else installed once from npm into
# .cache/restate/<version>).
.PHONY: test-restate
test-restate:
	cd runners/restate && $(GO) vet $(RACE) ./... && { $(GO) mod tidy -diff || { echo "runners/restate/go.mod/go.sum are not tidy"; exit 1; }; } && $(GO) test $(RACE) -count=1 -timeout 20m ./...

# What durable Work costs on Restate (docs/notes/durable-cost-restate.md), not
# part of .ci/run (benchmarks need a quiet machine): start -> work.ref and
# start -> result beside a bare Restate workflow invocation (interleaved
# rounds, medians: BenchmarkRestate), the same as separate benchmarks
# (BenchmarkBare, BenchmarkStartRef, BenchmarkStartResult), then the
# invocations, journal entries and bytes per Work beside a bare
# invocation, counted from Restate's introspection (TestCost).
RESTATE_BENCHTIME ?= 200x
RESTATE_COSTN     ?= 5
.PHONY: bench-restate
bench-restate:
	cd runners/restate && $(GO) test -run '^$$' -bench '^BenchmarkRestate$$' -benchtime $(RESTATE_BENCHTIME) -count=1 . && \
	$(GO) test -run '^$$' -bench '^Benchmark(Bare|StartRef|StartResult)$$' -benchtime 3s -count 1 . && \
	AGENTWORK_RESTATE_COST=$(RESTATE_COSTN) $(GO) test -count=1 -run '^TestCost$$' -v . | grep -v '^=== '

# The durable services' own faults (issue 37; docs/chaos-durable.md): on
# Temporal the dev server SIGKILLed and restarted on its database file, a
# worker cut off by a TCP proxy, a coordinator killed between a Work's
# admission and its start; on Restate the server SIGKILLed and restarted on
# its base directory, node name and ports. Each fault meets Work in every
# state; deliberately broken builds run beside (each check must fail on
# one). Prints one table (also in .cache/chaos/table.txt). CHAOS=smoke: one
# server restart per runner (.ci/run runs it).
CHAOS ?= full
.PHONY: chaos-durable
chaos-durable:
	@mkdir -p .cache/chaos && rm -f .cache/chaos/*.txt && date +%s > .cache/chaos/began
	AGENTWORK_CHAOS=$(CHAOS) AGENTWORK_CHAOS_TABLE=$(CURDIR)/.cache/chaos/temporal.txt MODE=chaos ./.ci/integration-temporal
	AGENTWORK_CHAOS=$(CHAOS) AGENTWORK_CHAOS_TABLE=$(CURDIR)/.cache/chaos/restate.txt MODE=chaos ./.ci/integration-restate
	@{ echo; echo "chaos-durable ($(CHAOS)): $$(( $$(date +%s) - $$(cat .cache/chaos/began) )) s, load average $$(cut -d' ' -f1-3 /proc/loadavg) on $$(nproc) cores"; \
		cat .cache/chaos/temporal.txt; echo; cat .cache/chaos/restate.txt; } | tee .cache/chaos/table.txt

# The Temporal runner across processes: the Temporal CLI's dev server (built
# from tools/temporal, cached by its go.sum), two workers and a coordinator
# (.ci/integration-temporal). demo-temporal kills a worker mid-run and
# prints what survived.
.PHONY: integration-temporal demo-temporal
integration-temporal:
	./.ci/integration-temporal

demo-temporal:
	MODE=demo ./.ci/integration-temporal

# The Restate runner across processes: a Restate server (npm-cached, as
# for test-restate), a registry process, two service processes behind a
# loopback balancer and a coordinator (.ci/integration-restate).
# demo-restate kills a service process mid-run and prints what survived.
.PHONY: integration-restate demo-restate
integration-restate:
	./.ci/integration-restate

demo-restate:
	MODE=demo ./.ci/integration-restate

# What durable Work costs beside bare Temporal in the same run, one table:
# actions (Temporal Cloud's definition), history events and bytes per
# Work, one owner's admission throughput, start latencies and a 1,000-Work
# run through two worker processes (.ci/bench-temporal; docs/notes/durable-cost.md
# has the figures); then the Restate runner's invocations, journal entries
# and latencies beside a bare Restate invocation (BENCH_RESTATE=0 leaves
# them out). Not part of .ci/run: it needs a quiet machine.
.PHONY: bench-temporal
bench-temporal:
	./.ci/bench-temporal
