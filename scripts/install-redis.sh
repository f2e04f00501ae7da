#!/usr/bin/env bash
# Installs Debian's redis-server (used by the queue-mode e2e test, test/e2e-scale) when it is missing.
# Idempotent: does nothing when `redis-server` is already on PATH. Needs root (or sudo) and Debian's apt.
# Waits up to 10 minutes for the dpkg lock when another apt-get is running.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
	echo "redis-server already installed: $(redis-server --version)"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-redis.sh: redis-server is missing and this is not root (and no sudo); install it with:" >&2
		echo "  apt-get update && apt-get install -y redis-server" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
LOCK_WAIT=(-o DPkg::Lock::Timeout=600)
$SUDO apt-get "${LOCK_WAIT[@]}" update -q
# --no-install-recommends: only the server and its tools, no extra packages.
$SUDO apt-get "${LOCK_WAIT[@]}" install -y -q --no-install-recommends redis-server

# The Debian package may start a system service on port 6379; the tests start their own server on a free
# port with their own config, so the service is not needed (stopping it is best effort: no systemd here).
if command -v service >/dev/null 2>&1; then
	$SUDO service redis-server stop >/dev/null 2>&1 || true
fi

echo "installed: $(redis-server --version)"
