#!/usr/bin/env bash
# Installs Debian's libfaketime (package `faketime`) when it is missing: test/e2e-scale/clocks-apart.test.ts
# preloads it into one n8n worker to move that worker's wall clock, as on a host whose clock is off.
# Idempotent: does nothing when the multi-threaded library is already there. Needs root (or sudo) and Debian's apt.
# apt-get runs through scripts/apt-install.sh (root or sudo, waits for the dpkg lock).
set -euo pipefail

LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1

if [ -f "$LIB" ]; then
	echo "faketime already installed: $LIB"
	exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" faketime

[ -f "$LIB" ] || { echo "install-faketime: faketime installed, but $LIB is missing" >&2; exit 1; }
echo "installed: $LIB ($(dpkg-query -W -f='${Package} ${Version}' faketime))"
