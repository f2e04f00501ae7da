#!/usr/bin/env bash
# Installs pinned n8n versions once into a cache outside the clone, for the e2e tests, the demo, `npm run dev`
# and the benchmark.
#
#   scripts/install-n8n.sh [version...]          install (default: tools/n8n/versions.json), then check each install
#   scripts/install-n8n.sh --dir <version>       print the folder the version lives in (installs nothing)
#   scripts/install-n8n.sh --check [version...]  check existing installs only (exit 1 with a repair hint)
#   scripts/install-n8n.sh --resolves <version>  whether the version's dependency tree resolves from the registry
#                                                with this recipe (no install; `npm run n8n:newest` uses it)
#
#   cache:  ${INVOICE_SERVICE_N8N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-invoice-service/n8n}
#   folder: <cache>/<version>-<key>; binary: <folder>/node_modules/.bin/n8n
#
# <key> hashes what shapes an install: the recipe section of this script (package template, overrides, the npm
# command and its environment) and the Node version.
# Change either and the next run installs afresh (older folders stay until `--prune`: another clone on this
# machine may still use them).
#   scripts/install-n8n.sh --prune               remove every folder that is not a current version-key
#
# An install counts as finished (marked with <folder>/.installed) only after n8n, in a throw-away user folder,
# opened a fresh SQLite database, imported a credential and a workflow, and ran that workflow with an
# expression in it: the SQLite driver and the expression sandbox both work. A folder without the mark (an
# interrupted or broken install) is wiped and redone. Concurrent callers wait for each other (flock).
#
# The nested `npm install` runs with every inherited npm_config_* variable removed: `npm run <script>` exports
# the project's .npmrc (ignore-scripts=true) to child processes, and an install without its scripts leaves
# sqlite3's native binding unbuilt (n8n then fails with "SQLite package has not been found installed").
# One install takes about 6-8 minutes and 2-3 GB on 2 cores. Needs Node 24: sourced from scripts/node24.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=node24.sh
source "$here/node24.sh"

cache="${INVOICE_SERVICE_N8N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-invoice-service/n8n}"
# The tested versions: tools/n8n/versions.json is the one list (the e2e driver reads it too).
mapfile -t DEFAULT_VERSIONS < <(node -p 'require(process.argv[1]).tested.join("\n")' "$here/../tools/n8n/versions.json")

log() { echo "[n8n-install] $*" >&2; }

install_key() {
  { sed -n '/^# >>> recipe/,/^# <<< recipe/p' "$here/install-n8n.sh"; node --version; } | sha256sum | cut -c1-12
}
KEY="$(install_key)"
folder_of() { echo "$cache/$1-$KEY"; }

# >>> recipe: everything from here to the end marker shapes an install and is hashed into its folder's key.
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

# Runs a command without any npm_config_* variable inherited from a calling `npm run`, except the two that
# node24.sh sets on purpose (Node 24 headers for node-gyp, and yes=true for `npx only-allow`).
without_npm_config() {
  local unset_args=() name
  for name in $(env | sed -n 's/^\(npm_config_[A-Za-z0-9_]*\)=.*/\1/p'); do
    case "$name" in npm_config_nodedir | npm_config_yes) ;; *) unset_args+=(-u "$name") ;; esac
  done
  env "${unset_args[@]}" "$@"
}

npm_install() {
  without_npm_config npm install --ignore-scripts=false --no-audit --no-fund --loglevel=notice
}
# <<< recipe

# Proves an install can do what the scripts use: open a fresh SQLite database, import, run a workflow whose
# Set node evaluates an expression (the expression sandbox), print its result. Prints a repair hint on failure.
check_install() {
  local version="$1" dir="$2" home out port status=0
  home="$(mktemp -d)"
  # n8n 2.x's task broker needs a free port (its default 5679 may be taken by another n8n).
  port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  mkdir -p "$home/in"
  cat >"$home/in/credentials.json" <<'EOF'
[{ "id": "installCheckCred", "name": "install check", "type": "httpHeaderAuth", "data": { "name": "X-Check", "value": "1" } }]
EOF
  cat >"$home/in/workflow.json" <<'EOF'
{ "id": "installCheck0001", "name": "install check", "active": false, "settings": {}, "connections": {
    "Start": { "main": [[{ "node": "Set", "type": "main", "index": 0 }]] } },
  "nodes": [
    { "id": "a1", "name": "Start", "type": "n8n-nodes-base.manualTrigger", "typeVersion": 1, "position": [0, 0], "parameters": {} },
    { "id": "a2", "name": "Set", "type": "n8n-nodes-base.set", "typeVersion": 3.4, "position": [200, 0],
      "parameters": { "assignments": { "assignments": [
        { "id": "s1", "name": "sum", "type": "number", "value": "={{ 20 + 22 }}" } ] } } } ] }
EOF
  local n8n_env=(
    N8N_USER_FOLDER="$home" N8N_ENCRYPTION_KEY=install-check N8N_LOG_LEVEL=info
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=false N8N_DIAGNOSTICS_ENABLED=false
    N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_TEMPLATES_ENABLED=false N8N_RUNNERS_BROKER_PORT="$port"
    DB_TYPE=sqlite
  )
  local bin="$dir/node_modules/.bin/n8n"
  out="$home/check.log"
  # NODE_ENV=test (set by jest) makes n8n's commands print nothing: the check runs as a user would.
  {
    env -u NODE_ENV "${n8n_env[@]}" "$bin" import:credentials --input="$home/in/credentials.json" &&
      env -u NODE_ENV "${n8n_env[@]}" "$bin" import:workflow --input="$home/in/workflow.json" &&
      env -u NODE_ENV "${n8n_env[@]}" "$bin" execute --id=installCheck0001 --rawOutput
  } >"$out" 2>&1 || status=$?
  # n8n 1.123 on Node 24 now and then dies by SIGSEGV while shutting down, after it printed a finished run:
  # that is a shutdown crash, not a broken install (the e2e driver treats it the same way).
  if [ "$status" -gt 128 ] && grep -q '"status": *"success"' "$out"; then
    log "n8n $version: the check run succeeded, then n8n died by signal $((status - 128)) while shutting down"
    status=0
  fi
  if [ "$status" -eq 0 ] && grep -q '"sum": *42' "$out"; then
    rm -rf "$home"
    return 0
  fi
  log "n8n $version in $dir is BROKEN: it could not open a database and run a workflow (exit $status)."
  # Name the native module that does not load (the usual cause: its install script did not run).
  local module
  for module in sqlite3 isolated-vm; do
    [ -d "$dir/node_modules/$module" ] || continue
    if ! (cd "$dir" && node -e "require('$module')" >/dev/null 2>&1); then
      log "  missing: $module's native binding does not load ($dir/node_modules/$module): its install script did not run?"
    fi
  done
  if grep -q "SQLite package has not been found" "$out"; then
    log "  n8n says: SQLite package has not been found installed (the SQLite driver)"
  fi
  log "  last lines of the check ($out):"
  tail -n 15 "$out" | sed 's/^/    /' >&2
  log "  repair: npm run n8n:install -- --repair $version"
  log "     (or: rm -rf '$dir' && npm run n8n:install -- $version)"
  return 1
}

prune() {
  local other keep=" " v
  for v in "${DEFAULT_VERSIONS[@]}" "$@"; do keep+="$(folder_of "$v") "; done
  for other in "$cache"/*; do
    [ -d "$other" ] || continue
    case "$keep" in *" $other "*) continue ;; esac
    log "removing $other ($(du -sh "$other" | cut -f1)): not a current install"
    rm -rf "$other"
  done
}

list_stale() {
  local version="$1" keep="$2" other
  for other in "$cache/$version" "$cache/$version"-*; do
    [ -e "$other" ] && [ "$other" != "$keep" ] || continue
    log "n8n $version: $other was made by another installer or Node version (kept; --prune removes it)"
  done
}

install_one() {
  local version="$1" dir
  dir="$(folder_of "$version")"
  if [ -f "$dir/.installed" ] && [ -x "$dir/node_modules/.bin/n8n" ]; then
    log "n8n $version already installed in $dir"
    return 0
  fi
  if [ -e "$dir" ]; then
    log "n8n $version: found an unfinished or broken install in $dir, removing it"
    rm -rf "$dir"
  fi
  list_stale "$version" "$dir"
  mkdir -p "$dir"
  write_package_json "$version" "$dir"
  log "installing n8n $version into $dir (about 6-8 minutes on 2 cores; npm log: $dir/install.log)"
  local start=$SECONDS
  (cd "$dir" && npm_install >"$dir/install.log" 2>&1) &
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
  log "n8n $version: installed in $((SECONDS - start)) s; checking it opens a database and runs a workflow"
  check_install "$version" "$dir" || return 1
  printf '%s installed %s in %ss with node %s, key %s\n' "$version" "$(date -u +%FT%TZ)" \
    "$((SECONDS - start))" "$(node --version)" "$KEY" >"$dir/.installed"
  log "n8n $version ready in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1)): $dir/node_modules/.bin/n8n"
}

repair_one() {
  local version="$1" dir
  dir="$(folder_of "$version")"
  [ -d "$dir/node_modules" ] || { log "n8n $version is not installed in $dir: nothing to repair"; return 1; }
  log "n8n $version: rebuilding native modules in $dir"
  (cd "$dir" && without_npm_config npm rebuild --ignore-scripts=false >>"$dir/install.log" 2>&1)
  check_install "$version" "$dir" || return 1
  [ -f "$dir/.installed" ] || printf '%s repaired %s, key %s\n' "$version" "$(date -u +%FT%TZ)" "$KEY" \
    >"$dir/.installed"
  log "n8n $version repaired: $dir"
}

# Whether a version resolves from the registry with this installer's own recipe (no install: the dependency tree
# only, `npm install --package-lock-only`). Prints "resolves", or npm's reason (e.g. "ETARGET: No matching version
# found for @n8n/agents@0.26.2."); exit 0 / 1. `npm run n8n:newest` uses it.
resolves() {
  local version="$1" dir status=0
  dir="$(mktemp -d)"
  write_package_json "$version" "$dir"
  (cd "$dir" && without_npm_config npm install --package-lock-only --ignore-scripts --no-audit --no-fund \
    --loglevel=error >"$dir/resolve.log" 2>&1) || status=$?
  if [ "$status" -eq 0 ]; then
    echo "resolves"
  else
    local code reason
    code="$(sed -n 's/^npm error code //p' "$dir/resolve.log" | head -1)"
    reason="$(grep -v -E '^npm error (code|A complete log|$)' "$dir/resolve.log" | sed -n 's/^npm error \(notarget \)\{0,1\}//p' | head -1)"
    echo "${code:-npm exit $status}: ${reason:-see the npm log}"
  fi
  rm -rf "$dir"
  return "$status"
}

mode=install
case "${1:-}" in
  --dir) [ "$#" -eq 2 ] || { log "usage: $0 --dir <version>"; exit 2; }; folder_of "$2"; exit 0 ;;
  --resolves) [ "$#" -eq 2 ] || { log "usage: $0 --resolves <version>"; exit 2; }; resolves "$2"; exit $? ;;
  --check) mode=check; shift ;;
  --repair) mode=repair; shift ;;
  --prune) mode=prune; shift ;;
esac
if [ "$#" -eq 0 ]; then set -- "${DEFAULT_VERSIONS[@]}"; fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
  log "another install is running in $cache; waiting for it"
  flock 9
fi
if [ "$mode" = prune ]; then prune "$@"; exit 0; fi
for v in "$@"; do
  case "$mode" in
    install) install_one "$v" ;;
    repair) repair_one "$v" ;;
    check) check_install "$v" "$(folder_of "$v")" && log "n8n $v in $(folder_of "$v"): OK" ;;
  esac
done
