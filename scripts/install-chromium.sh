#!/usr/bin/env bash
# Installs Debian's Chromium (for the browser test) when /usr/bin/chromium is missing. Idempotent and quiet:
# prints nothing when Chromium is already there. Playwright's own browser downloads are never used.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
# A browser named by INVOICE_SERVICE_CHROMIUM (e.g. google-chrome on Ubuntu runners) needs no install.
if [ -x "$CHROMIUM" ] || [ -x "${INVOICE_SERVICE_CHROMIUM:-}" ]; then
	exit 0
fi

# One installer at a time (parallel jest workers or a second terminal).
LOCK="${TMPDIR:-/tmp}/n8n-nodes-invoice-service-chromium.lock"
exec 9>"$LOCK"
flock 9
if [ -x "$CHROMIUM" ]; then
	exit 0
fi

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" chromium fonts-liberation
if [ ! -x "$CHROMIUM" ]; then
	echo "install-chromium: apt-get succeeded but $CHROMIUM is still missing" >&2
	exit 1
fi
echo "install-chromium: $("$CHROMIUM" --version 2>/dev/null || echo chromium) installed" >&2
