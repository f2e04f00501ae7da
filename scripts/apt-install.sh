#!/usr/bin/env bash
# Installs Debian packages for the tests that need a system program (Chromium, redis-server):
# `bash scripts/apt-install.sh <package>...`. Uses sudo when not root, waits up to 10 minutes for another
# apt-get to release the dpkg lock, keeps apt's output in a log and shows its tail only when it fails.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: apt-install.sh <package>..." >&2; exit 2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -n"
	else
		echo "apt-install: installing $* needs root or sudo; run: apt-get update && apt-get install -y $*" >&2
		exit 1
	fi
fi

LOG="$(mktemp "${TMPDIR:-/tmp}/apt-install.XXXXXX.log")"
echo "apt-install: installing $* (log: $LOG)" >&2
export DEBIAN_FRONTEND=noninteractive
LOCK_WAIT=(-o DPkg::Lock::Timeout=600)
# --no-install-recommends: only what is asked for.
if ! { $SUDO apt-get "${LOCK_WAIT[@]}" update -q &&
	$SUDO apt-get "${LOCK_WAIT[@]}" install -y -q --no-install-recommends "$@"; } >"$LOG" 2>&1; then
	tail -n 30 "$LOG" >&2
	echo "apt-install: apt-get failed (full log: $LOG)" >&2
	exit 1
fi
rm -f "$LOG"
