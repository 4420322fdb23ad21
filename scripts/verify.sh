#!/usr/bin/env bash
# Checks what CI checks besides tests: gofmt, go vet, and that `make generate`
# changes nothing (generated code and manifests are up to date).
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

# Fingerprint every file before and after generating: any difference means
# the committed generated output is stale. This works on a dirty work tree.
fingerprint() { git ls-files -co --exclude-standard | sort | xargs -r sha256sum 2>/dev/null; }
before=$(fingerprint)
go generate ./...
after=$(fingerprint)
if [[ $before != "$after" ]]; then
	echo "verify: 'make generate' changed these files; commit the regenerated output:" >&2
	diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u >&2
	exit 1
fi
echo "verify: ok"
