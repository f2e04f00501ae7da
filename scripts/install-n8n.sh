#!/usr/bin/env bash
# Installs pinned n8n versions once into a cache outside the clone, for the e2e tests, the demo and the
# benchmark:  scripts/install-n8n.sh [version...]   (default: 2.41.1 1.123.81)
#
#   cache: ${INVOICE_SERVICE_N8N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-invoice-service/n8n}/<version>
#   binary: <cache>/<version>/node_modules/.bin/n8n
#
# A finished install is marked with `<version>/.installed` and skipped next time; a folder without the mark
# (an interrupted install) is wiped and redone. Concurrent callers wait for each other (flock).
# Needs Node 24 (n8n 2.x requires it; 1.x runs on it too): sourced from scripts/node24.sh.
# One install takes about 4 minutes and 2-3 GB on 2 cores.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=node24.sh
source "$here/node24.sh"

cache="${INVOICE_SERVICE_N8N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-invoice-service/n8n}"
mkdir -p "$cache"

if [ "$#" -eq 0 ]; then set -- 2.41.1 1.123.81; fi

log() { echo "[n8n-install] $*" >&2; }

# package.json for one version. The overrides work around packages the registry here cannot serve:
#  2.x: linkedom 0.18.15 needs a package the registry lacks -> 0.18.14
#  1.x: xlsx points at a CDN tarball -> the registry mirror @e965/xlsx
# @confluentinc/kafka-javascript's install script downloads binaries from the internet: not run (allowScripts).
write_package_json() {
  local version="$1" dir="$2" overrides
  case "$version" in
    1.*) overrides='"xlsx": "npm:@e965/xlsx@0.20.3"' ;;
    *) overrides='"linkedom": "0.18.14"' ;;
  esac
  cat >"$dir/package.json" <<EOF
{
  "name": "n8n-cache-$version",
  "private": true,
  "description": "n8n $version for the n8n-nodes-invoice-service e2e tests, demo and benchmark",
  "dependencies": { "n8n": "$version" },
  "overrides": { $overrides },
  "allowScripts": { "@confluentinc/kafka-javascript": false }
}
EOF
}

install_one() {
  local version="$1" dir="$cache/$1"
  if [ -f "$dir/.installed" ] && [ -x "$dir/node_modules/.bin/n8n" ]; then
    log "n8n $version already installed in $dir"
    return 0
  fi
  if [ -e "$dir" ]; then
    log "n8n $version: found an unfinished install in $dir, removing it"
    rm -rf "$dir"
  fi
  mkdir -p "$dir"
  write_package_json "$version" "$dir"
  log "installing n8n $version into $dir (about 4 minutes on 2 cores; npm log: $dir/install.log)"
  local start=$SECONDS
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=notice >"$dir/install.log" 2>&1) &
  local pid=$!
  # npm prints nothing useful without a TTY: show elapsed time and size instead.
  local ticks=0 size
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    ticks=$((ticks + 1))
    if [ $((ticks % 15)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
      size="$(du -sh "$dir/node_modules" 2>/dev/null | cut -f1 || true)"
      log "n8n $version: $((SECONDS - start)) s, node_modules ${size:-0}"
    fi
  done
  if ! wait "$pid"; then
    log "n8n $version: npm install FAILED after $((SECONDS - start)) s; last lines of $dir/install.log:"
    tail -n 40 "$dir/install.log" >&2
    return 1
  fi
  local got
  if ! got="$("$dir/node_modules/.bin/n8n" --version 2>>"$dir/install.log")"; then
    log "n8n $version: installed but 'n8n --version' fails; see $dir/install.log"
    return 1
  fi
  got="$(echo "$got" | tail -n 1)"
  if [ "$got" != "$version" ]; then
    log "n8n $version: 'n8n --version' says '$got'"
    return 1
  fi
  printf '%s installed %s in %ss with node %s\n' "$version" "$(date -u +%FT%TZ)" "$((SECONDS - start))" \
    "$(node --version)" >"$dir/.installed"
  log "n8n $version ready in $((SECONDS - start)) s: $dir/node_modules/.bin/n8n"
}

exec 9>"$cache/.lock"
if ! flock -n 9; then
  log "another install is running in $cache; waiting for it"
  flock 9
fi
for v in "$@"; do
  install_one "$v"
done
