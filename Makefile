# pflow build and test entry points. README.md names `make demo` and `make test`.
GO ?= go
BIN := bin/pflow

.PHONY: build demo test peers vet fmt-check bench fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/pflow

# Runs a real example workflow with a throwaway PFLOW_HOME.
demo: build
	PFLOW_HOME=$$(mktemp -d) ./$(BIN) examples/hello.pflow.md name=World

# Installs the npm test peers (MCP servers, TS SDK client, conformance suite)
# from the committed lock file.
peers:
	./scripts/install-peers.sh

# Everything CI runs: formatting, vet, the npm peers, and the whole suite
# with the race detector.
test: fmt-check vet peers
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

bench:
	./scripts/bench.sh

# Long fuzz runs (the short seed corpora run inside `make test`).
fuzz:
	./scripts/fuzz.sh

# Regenerates docs/nodes.md and docs/cli.md from the code (a test fails when they are stale).
.PHONY: docs
docs:
	$(GO) run ./internal/tools/gendocs

clean:
	rm -rf bin
