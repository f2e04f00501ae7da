#!/usr/bin/env bash
# Runs a command with Node.js 24 first on PATH (fetched from the npm registry when the machine's is older).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
exec "$@"
