#!/usr/bin/env bash
# Checks that the generated files of a source tree (default: this
# repository) are exactly what `go generate ./...` produces from a clean
# tree: it copies the tree once, deletes every generated file of the copy
# (those carrying a "Code generated ... DO NOT EDIT." line, outside
# testdata), runs go generate there and compares the copy with the tree,
# file by file. A generated file that is stale (left over from a kind that
# is gone), missing or out of date fails the check.
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
# copy copies the tree's files to $1 and lists them, NUL-separated and
# sorted, in $tmp/before. Tracked files deleted from the work tree are not
# copied.
copy() {
	mkdir -p "$1"
	list | (cd "$src" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done; true' sh) |
		LC_ALL=C sort -z >"$tmp/before"
	(cd "$src" && tar --null -T "$tmp/before" -cf -) | tar -xf - -C "$1"
}
copy "$tmp/clean"

marker='^(//|#) Code generated .* DO NOT EDIT\.$'
(cd "$tmp/clean" && find . -name testdata -prune -o -type f -print0 |
	xargs -0 -r grep -lZE "$marker" | xargs -0 -r rm -f)
if ! out=$(cd "$tmp/clean" && go generate ./... 2>&1); then
	echo "verify: go generate failed in a clean copy of $src:" >&2
	echo "$out" >&2
	exit 1
fi

# The tree's files (as copied) against the clean copy's after go generate.
(cd "$tmp/clean" && find . \( -type f -o -type l \) -print0 | sed -z 's|^\./||' | LC_ALL=C sort -z) >"$tmp/after"
diff=$(
	LC_ALL=C comm -z -23 "$tmp/before" "$tmp/after" | tr '\0' '\n' | sed 's|^|  stale (not generated any more): |'
	LC_ALL=C comm -z -13 "$tmp/before" "$tmp/after" | tr '\0' '\n' | sed 's|^|  missing (generated, not committed): |'
	# Files in both, compared by checksum (one process per batch of files,
	# not one per file); the path follows the 64-digit sum and two spaces.
	LC_ALL=C comm -z -12 "$tmp/before" "$tmp/after" >"$tmp/both"
	(cd "$src" && xargs -0 -r sha256sum -- <"$tmp/both") >"$tmp/sum.tree"
	(cd "$tmp/clean" && xargs -0 -r sha256sum -- <"$tmp/both") >"$tmp/sum.clean"
	awk 'NR == FNR { tree[substr($0, 67)] = $1; next }
		tree[substr($0, 67)] != $1 { print "  out of date: " substr($0, 67) }' "$tmp/sum.tree" "$tmp/sum.clean"
)
if [[ -n $diff ]]; then
	echo "verify: the generated files differ from what go generate writes into a clean tree; run 'make generate' and commit the result:" >&2
	echo "$diff" >&2
	exit 1
fi
