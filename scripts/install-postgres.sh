#!/usr/bin/env bash
# Installs Debian's PostgreSQL server (used by the queue-mode e2e test, test/e2e-scale, and the storm benchmark)
# when it is missing. Idempotent: does nothing when initdb and postgres are already under
# /usr/lib/postgresql/<version>/bin. Needs root (or sudo) and Debian's apt.
# apt-get runs through scripts/apt-install.sh (root or sudo, waits for the dpkg lock).
set -euo pipefail

found() {
	local bin
	for bin in /usr/lib/postgresql/*/bin; do
		[ -x "$bin/initdb" ] && [ -x "$bin/postgres" ] && { echo "$bin"; return 0; }
	done
	return 1
}

if bin="$(found)"; then
	echo "postgresql already installed: $("$bin/postgres" --version)"
	exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" postgresql

# The Debian package creates and starts a cluster on port 5432; the tests start their own server (initdb into a
# temp dir, a free port), so the system service is not needed (stopping it is best effort: no systemd here).
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
if command -v service >/dev/null 2>&1; then
	$SUDO service postgresql stop >/dev/null 2>&1 || true
fi

bin="$(found)" || { echo "install-postgres: postgresql installed, but no initdb under /usr/lib/postgresql/*/bin" >&2; exit 1; }
echo "installed: $("$bin/postgres" --version)"
