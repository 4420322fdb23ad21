# Lariat's developer entry points. A newcomer needs two: `make run` and
# `make test`. Every tool is built from Go modules; nothing is installed by hand.

SHELL := /bin/bash
GO ?= go
# Tests start real control planes; several packages may run at once.
TEST_FLAGS ?= -race -timeout 30m

.PHONY: all controlplane chromium test run generate verify bench screenshots

all: test

## controlplane: build etcd and kube-apiserver into the per-user cache (once).
controlplane:
	@scripts/controlplane/build.sh

## chromium: install Chromium for the dashboard's browser tests where it is
## missing (Debian's package, as root; otherwise it says how).
chromium:
	@scripts/install-chromium.sh

## test: everything CI runs: verify, then every test with -race against a real API server
## (the main module, scripts/bench, and the lasso compatibility module compat/lasso),
## the dashboard's in a real headless Chromium.
test: controlplane chromium verify
	$(GO) test $(TEST_FLAGS) ./...
	cd scripts/bench && $(GO) test -timeout 10m ./...
	cd compat/lasso && $(GO) test $(TEST_FLAGS) ./...

## run: start a local control plane and the example WebApp operator with
## sample WebApps, and tell what happens until Ctrl-C (RUN_FLAGS adds flags,
## e.g. RUN_FLAGS=--listen=127.0.0.1:9000).
# The program is built first and run directly (not with go run) so Ctrl-C
# reaches it alone and its clean shutdown is what the user sees. The
# dashboard's URL comes first, before the control plane and the build
# (the program prints it again once it listens).
RUN_LISTEN = $(or $(lastword $(patsubst --listen=%,%,$(filter --listen=%,$(RUN_FLAGS)))),127.0.0.1:8089)
run:
	@echo "Dashboard: http://$(RUN_LISTEN)/ui/  (live once the operator runs)"
	@$(MAKE) --no-print-directory controlplane
	@echo "Building the example operator (examples/webapp)..."
	@$(GO) build -o bin/webapp ./examples/webapp
	@bin/webapp --local --samples $(RUN_FLAGS)

## generate: regenerate all generated code and manifests.
generate:
	$(GO) generate ./...

## verify: gofmt, go vet, and generated code exactly what a clean tree
## generates (nothing out of date, stale or missing).
verify:
	@scripts/verify.sh

## screenshots: regenerate the dashboard's screenshots in docs/images (taken
## by its browser tests; see docs/dashboard.md).
screenshots: controlplane chromium
	mkdir -p docs/images
	LARIAT_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run 'TestDashboardInABrowser|TestTenThousandValuesInABrowser|TestShardedReplicasInABrowser' ./pkg/dashboard/ ./examples/webapp/operator/

## bench: run the benchmarks, then the side-by-side comparison with lasso and
## controller-runtime (prints a Markdown table; see docs/benchmarks.md).
bench: controlplane
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd scripts/bench && $(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./queue/
	cd scripts/bench && $(GO) run ./compare
	cd scripts/bench && $(GO) run ./compare -workload pods -updates 1000 \
		-frameworks lariat,lariat-compact,lariat-metadata,lasso,controller-runtime,controller-runtime-strip,controller-runtime-metadata
