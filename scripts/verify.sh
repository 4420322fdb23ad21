#!/usr/bin/env bash
# Checks what CI checks besides tests: gofmt, go vet, and that the
# generated code and manifests are exactly what `make generate` writes into
# a clean tree (nothing out of date, stale or missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unformatted=$(git ls-files -co --exclude-standard -- '*.go' | xargs -r gofmt -l)
if [[ -n $unformatted ]]; then
	echo "verify: gofmt would change these files (run 'gofmt -w' on them):" >&2
	echo "$unformatted" >&2
	exit 1
fi

go vet ./...
(cd scripts/bench && go vet ./...)
# The lasso/wrangler compatibility layer is a module of its own (see its
# package doc): ./... of the main module does not reach it.
(cd compat/lasso && go vet ./...)

# Generated output must be what a clean tree generates: out-of-date,
# stale and missing generated files all fail (see verify-generated.sh).
scripts/verify-generated.sh
echo "verify: ok"
