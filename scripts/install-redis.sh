#!/usr/bin/env bash
# Installs Debian's redis-server (used by the queue-mode e2e test, test/e2e-scale) when it is missing.
# Idempotent: does nothing when `redis-server` is already on PATH. Needs root (or sudo) and Debian's apt.
# apt-get runs through scripts/apt-install.sh (root or sudo, waits for the dpkg lock).
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
	echo "redis-server already installed: $(redis-server --version)"
	exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" redis-server

# The Debian package may start a system service on port 6379; the tests start their own server on a free
# port with their own config, so the service is not needed (stopping it is best effort: no systemd here).
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
if command -v service >/dev/null 2>&1; then
	$SUDO service redis-server stop >/dev/null 2>&1 || true
fi

echo "installed: $(redis-server --version)"
