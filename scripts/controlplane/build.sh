#!/usr/bin/env bash
# Builds the etcd and kube-apiserver binaries pinned by this module's go.mod
# into the per-user cache that pkg/controlplane reads:
#   ${LARIAT_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lariat/controlplane/<kubernetes version>}
# Does nothing when the binaries of these versions are already there. The first
# build takes about 5 minutes on 2 cores; progress is printed as it goes.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
k8s_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
dir=${LARIAT_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lariat/controlplane/$k8s_version}
stamp="kubernetes=$k8s_version etcd=$etcd_version"

up_to_date() {
	[[ -x $dir/etcd && -x $dir/kube-apiserver && "$(cat "$dir/VERSIONS" 2>/dev/null)" == "$stamp" ]]
}
if up_to_date; then
	echo "control plane: etcd $etcd_version and kube-apiserver $k8s_version are in $dir"
	exit 0
fi

mkdir -p "$dir"
# Two builds at once (say, CI and a developer) would race on the same files.
exec 9>"$dir/.lock"
if command -v flock >/dev/null; then
	flock 9
	if up_to_date; then exit 0; fi
fi

# build <name> <package> <ldflags>: go build with a progress line every 15 s,
# counting compiled packages against the package's dependency count.
build() {
	local name=$1 pkg=$2 ldflags=$3 total start
	total=$(go list -deps "$pkg" | wc -l)
	start=$SECONDS
	echo "control plane: building $name from $pkg (up to $total packages; cached packages are skipped)"
	local n=0 last=$SECONDS status=0 line
	while IFS= read -r line; do
		if [[ $line == "exit status "* ]]; then
			status=${line#exit status }
		elif [[ $line =~ ^[a-zA-Z0-9_./-]+$ ]]; then
			n=$((n + 1)) # go build -v names each package it compiles
		else
			echo "$line"
		fi
		if ((SECONDS - last >= 15)); then
			last=$SECONDS
			echo "control plane: $name: $n of $total packages compiled ($((SECONDS - start)) s)"
		fi
	done < <(
		CGO_ENABLED=0 go build -v -trimpath -ldflags "$ldflags" -o "$dir/$name.tmp" "$pkg" 2>&1
		echo "exit status $?"
	)
	if [[ $status -ne 0 ]]; then
		echo "control plane: building $name failed" >&2
		rm -f "$dir/$name.tmp"
		return "$status"
	fi
	mv -f "$dir/$name.tmp" "$dir/$name"
	echo "control plane: $name built in $((SECONDS - start)) s"
}

rm -f "$dir/VERSIONS"
build etcd go.etcd.io/etcd/server/v3 "-s -w"
minor=${k8s_version#v1.}
minor=${minor%%.*}
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "-s -w \
	-X k8s.io/component-base/version.gitVersion=$k8s_version \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$minor \
	-X k8s.io/component-base/version.gitTreeState=clean"
echo "$stamp" >"$dir/VERSIONS"
echo "control plane: etcd $etcd_version and kube-apiserver $k8s_version are in $dir"
