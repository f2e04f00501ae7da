#!/usr/bin/env bash
# Installs Debian's Chromium (for the browser test) when /usr/bin/chromium is missing. Idempotent and quiet:
# prints nothing when Chromium is already there. Playwright's own browser downloads are never used.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -n"
	else
		echo "install-chromium: $CHROMIUM is missing and this user cannot install packages (no root, no sudo)" >&2
		exit 1
	fi
fi

# One installer at a time (parallel jest workers or a second terminal).
LOCK="${TMPDIR:-/tmp}/n8n-nodes-invoice-service-chromium.lock"
exec 9>"$LOCK"
flock 9
if [ -x "$CHROMIUM" ]; then
	exit 0
fi

LOG="$(mktemp "${TMPDIR:-/tmp}/install-chromium.XXXXXX.log")"
echo "install-chromium: installing Debian's chromium (log: $LOG)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends chromium fonts-liberation; } >"$LOG" 2>&1; then
	tail -n 30 "$LOG" >&2
	echo "install-chromium: apt-get failed (full log: $LOG)" >&2
	exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
	echo "install-chromium: apt-get succeeded but $CHROMIUM is still missing" >&2
	exit 1
fi
rm -f "$LOG"
echo "install-chromium: $("$CHROMIUM" --version 2>/dev/null || echo chromium) installed" >&2
