#!/usr/bin/env bash
# Makes sure a Chromium is installed for the dashboard's browser tests
# (internal/browsertest): Debian's chromium package, installed with apt-get
# when running as root (or with password-less sudo) on a machine that has
# it; otherwise it says what to do and fails. LARIAT_CHROMIUM names another
# Chromium or Chrome binary to use instead.
set -euo pipefail

if [[ -n ${LARIAT_CHROMIUM:-} ]]; then
	if [[ -x $LARIAT_CHROMIUM ]]; then exit 0; fi
	echo "install-chromium: LARIAT_CHROMIUM=$LARIAT_CHROMIUM is not an executable file" >&2
	exit 1
fi
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null; then exit 0; fi
done

as_root=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		as_root=(sudo -n)
	else
		as_root=(none)
	fi
fi
if [[ ${as_root[0]:-} != none ]] && command -v apt-get >/dev/null; then
	echo "install-chromium: installing Debian's chromium package for the dashboard's browser tests..."
	"${as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
	command -v chromium >/dev/null && exit 0
	echo "install-chromium: apt-get installed chromium, but it is not on PATH" >&2
	exit 1
fi
cat >&2 <<'MSG'
install-chromium: the dashboard's browser tests need Chromium, and it is not installed.
Install it as root, e.g. on Debian or Ubuntu:
    apt-get install -y chromium
or set LARIAT_CHROMIUM to the path of a Chromium or Chrome binary, then run make test again.
MSG
exit 1
