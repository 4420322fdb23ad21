#!/usr/bin/env bash
# Checks that the generated files of a source tree (default: this
# repository) are exactly what `go generate ./...` produces from a clean
# tree: it copies the tree, deletes every generated file of the copy (those
# carrying a "Code generated ... DO NOT EDIT." line, outside testdata), runs
# go generate there and compares. A generated file that is stale (left over
# from a kind that is gone), missing or out of date fails the check.
# Usage: verify-generated.sh [dir]
set -euo pipefail
src=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The files of the tree: what git knows (tracked or not ignored) in a work
# tree, every file elsewhere.
list() {
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$src" ls-files -co --exclude-standard -z
	else
		(cd "$src" && find . -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||')
	fi
}
copy() {
	mkdir -p "$1"
	# Tracked files deleted from the work tree are not copied.
	list | (cd "$src" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done; true' sh) |
		(cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$1"
}
copy "$tmp/committed"
copy "$tmp/clean"

marker='^(//|#) Code generated .* DO NOT EDIT\.$'
(cd "$tmp/clean" && find . -name testdata -prune -o -type f -print0 |
	xargs -0 -r grep -lZE "$marker" | xargs -0 -r rm -f)
if ! out=$(cd "$tmp/clean" && go generate ./... 2>&1); then
	echo "verify: go generate failed in a clean copy of $src:" >&2
	echo "$out" >&2
	exit 1
fi
if ! diff=$(diff -rq "$tmp/committed" "$tmp/clean"); then
	echo "verify: the generated files differ from what go generate writes into a clean tree; run 'make generate' and commit the result:" >&2
	echo "$diff" | awk -v c="$tmp/committed" -v n="$tmp/clean" '
		function rel(p) { sub("^(" c "|" n ")/?", "", p); return p }
		/^Files / { print "  out of date: " rel($2); next }
		/^Only in / {
			dir = $3; sub(":$", "", dir); d = rel(dir); f = (d == "" ? "" : d "/") $4
			if (index(dir, c) == 1) print "  stale (not generated any more): " f
			else print "  missing (generated, not committed): " f
			next
		}
		{ print "  " $0 }' >&2
	exit 1
fi
