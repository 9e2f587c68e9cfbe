# pflow build and test entry points. README.md names `make demo` and `make test`.
GO ?= go
BIN := bin/pflow
SHELL := /bin/bash

# Build information for `pflow --version` (internal/cli/version.go).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG := github.com/pflow-go/pflow/internal/cli
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).BuildDate=$(BUILD_DATE)

.PHONY: build temporal install demo test peers tools vet lint fmt-check bench fuzz mutate clean

# Where `make tools` keeps the prebuilt tools the tests run (by version), and
# where the tests look for them (internal/testutil/temporaldev).
PFLOW_TEST_TOOLS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pflow-test-tools
export PFLOW_TEST_TOOLS

# A single static binary: no cgo, no libc to match.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pflow

# pflow-temporal, pflow's Temporal engine, beside bin/pflow (docs/scale-out.md):
# pflow hands `--temporal` and `pflow worker` to it.
temporal: build
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/pflow-temporal ./cmd/pflow-temporal

# Installs pflow and pflow-temporal into $(go env GOBIN), or $(go env GOPATH)/bin when GOBIN is unset.
install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/pflow ./cmd/pflow-temporal
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH)/bin; \
	echo "Installed $$dir/pflow and $$dir/pflow-temporal"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "Add it to your PATH: export PATH=\"$$dir:\$$PATH\"";; esac

# Runs a real example workflow with a throwaway PFLOW_HOME, removed afterwards.
demo: build
	@home=$$(mktemp -d) && trap 'rm -rf "$$home"' EXIT && \
	PFLOW_HOME="$$home" $(abspath $(BIN)) examples/hello.pflow.md name=World

# Installs the npm test peers (MCP servers, TS SDK client, conformance suite)
# from the committed lock file.
peers:
	./scripts/install-peers.sh

# Builds the tools the tests run that take minutes to build (the temporal
# CLI, for its dev server), once per version, into $(PFLOW_TEST_TOOLS): the
# tests never build them under go test's timeout; without them they skip
# (or fail under CI=true) naming this target.
tools:
	GO=$(GO) ./scripts/install-temporal-dev.sh

# Everything CI runs: formatting, vet, lint, the npm peers, the test tools,
# and the whole suite with the race detector. The output keeps package results and
# failing tests' output, and ends with one line: "N passed, N failed".
# pflow, pflow-temporal and the commands the tests start are compiled first, as
# internal/testutil/pflowbin builds them (its Packages), and pflow as
# `make demo` builds it (no cgo, for TestNewcomerPath), so the tests that
# build them only link them: on an empty Go cache those compiles take
# minutes, which must not run under go test's timeout.
TEST_BINARIES := ./cmd/pflow ./cmd/pflow-temporal ./internal/testutil/fakemcp/fakemcpd ./internal/reliability/loopwriter/loopwriterd
test: fmt-check vet lint peers tools
	@echo "compiling pflow, pflow-temporal and the test commands for the tests that run them"
	@$(GO) build -o /dev/null $(TEST_BINARIES)
	@CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o /dev/null ./cmd/pflow
	@set -o pipefail; $(GO) test -race -count=1 -json ./... | $(GO) run ./internal/tools/testsummary

vet:
	$(GO) vet ./...

# The lint gate (docs/decisions.md, "A lint gate in the test command"):
#   - staticcheck, configured by staticcheck.conf: its default checks (bugs,
#     SA; simplifications, S; unused code, U1000; style, ST) plus package
#     comments (ST1000), without ST1005 (pflow's error strings are whole
#     sentences shown to people, many kept from the Python pflow);
#   - internal/tools/vetcheck through go vet: shadow (an inner := hiding an
#     outer variable that is read, unassigned, after it) and ctxfirst
#     (context.Context comes first), which staticcheck does not have.
# staticcheck rather than golangci-lint: one binary of 8 modules that
# covers the default checks and unused code; the two checks it lacks are 330
# lines here (with their tests), pinned by go.mod. golangci-lint would bring
# them as configuration, but it is a build of 226 modules (v2.15.0) whose
# staticcheck part is this same v0.8.2.
# staticcheck v0.8.2 is staticcheck 2026.2.2, which needs Go >= 1.26; it is
# built once per version and Go toolchain into $(PFLOW_TEST_TOOLS)
# (scripts/install-staticcheck.sh: seconds, or minutes on a cold Go cache).
# Time on a busy 2-core machine: warm, the whole target 13 s (staticcheck
# 8 s, vetcheck 6 s); cold, staticcheck 1m55s with an empty staticcheck
# cache (STATICCHECK_CACHE) and vetcheck 1m38s when it changes (go vet then
# runs it anew on every package and dependency). A change to one package
# costs the packages that import it.
STATICCHECK_VERSION := v0.8.2
lint:
	@sc=$$(GO=$(GO) ./scripts/install-staticcheck.sh $(STATICCHECK_VERSION)) && \
	echo "staticcheck ./..." && "$$sc" ./...
	@$(GO) build -o bin/vetcheck ./internal/tools/vetcheck
	@echo "go vet -vettool=bin/vetcheck ./..."
	@$(GO) vet -vettool=$(abspath bin/vetcheck) ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

bench:
	./scripts/bench.sh

# The mutation harness (internal/mutate), every mutant: edits each example
# workflow line by line, validates each mutant and runs the ones that pass;
# prints the report (figures per workflow and operator, every survivor).
# `make test` runs a 1-in-10 sample of it. Niced: it runs many workflows.
MUTATE_REPORT ?= bin/mutation-report.md
mutate:
	@mkdir -p $(dir $(MUTATE_REPORT))
	@nice -n 10 $(GO) test -count=1 -timeout 60m -run '^TestMutationHarness$$' ./internal/mutate \
		-args -mutate.full -mutate.report=$(abspath $(MUTATE_REPORT)) >/dev/null; status=$$?; \
	cat $(MUTATE_REPORT); echo; echo "Report written to $(MUTATE_REPORT)"; exit $$status

# Long fuzz runs (the short seed corpora run inside `make test`).
fuzz:
	./scripts/fuzz.sh

# Regenerates docs/nodes.md and docs/cli.md from the code (a test fails when they are stale).
.PHONY: docs
docs:
	$(GO) run ./internal/tools/gendocs

clean:
	rm -rf bin
