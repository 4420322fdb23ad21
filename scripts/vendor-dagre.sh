#!/usr/bin/env bash
# Vendors the dashboard's graph layout library, @dagrejs/dagre, at a pinned
# version from the npm registry into pkg/dashboard/assets/vendor/dagre
# (its ES module bundle unchanged, with its licences). Usage:
#   scripts/vendor-dagre.sh 3.1.3
set -euo pipefail
version=${1:?usage: $0 VERSION (e.g. 3.1.3)}
dest=$(cd "$(dirname "$0")/.." && pwd)/pkg/dashboard/assets/vendor/dagre
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "@dagrejs/dagre@$version" >/dev/null
tar xzf "dagrejs-dagre-$version.tgz"
graphlib=$(node -p "require('./package/package.json').dependencies['@dagrejs/graphlib']")
npm pack --silent "@dagrejs/graphlib@$graphlib" >/dev/null
mkdir g && tar xzf "dagrejs-graphlib-$graphlib.tgz" -C g
cp package/dist/dagre.esm.js package/dist/dagre.esm.js.LEGAL.txt "$dest/"
cp package/LICENSE "$dest/LICENSE"
cp g/package/LICENSE "$dest/LICENSE.graphlib"
cat >"$dest/VERSION" <<INFO
@dagrejs/dagre $version (MIT), from the npm registry:
  npm pack @dagrejs/dagre@$version
  tarball sha256 $(sha256sum "dagrejs-dagre-$version.tgz" | cut -d' ' -f1)
dagre.esm.js is the package's dist/dagre.esm.js unchanged
(sha256 $(sha256sum package/dist/dagre.esm.js | cut -d' ' -f1));
it bundles its one dependency, @dagrejs/graphlib $graphlib (MIT, LICENSE.graphlib).
Update with scripts/vendor-dagre.sh VERSION.
INFO
echo "vendored @dagrejs/dagre $version into $dest"
