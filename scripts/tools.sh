#!/usr/bin/env bash
# Installs the external binaries the local stack needs into .tools/bin.
# Builds are slow (Temporal CLI ≈3-6 min, MinIO ≈9 min on 2 cores), so each built binary is
# also kept in a per-user cache keyed by version; a fresh clone then only copies it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
cache="${TRAWLER_TOOLS_CACHE:-$HOME/.cache/trawler/tools}"
mkdir -p "$bin" "$cache"

# name, go package, version. v1.9.x of the CLI cannot be go-installed (replace directive).
TOOLS=(
  "temporal github.com/temporalio/cli/cmd/temporal v1.5.1"
  "minio github.com/minio/minio v0.0.0-20260212201848-7aac2a2c5b7c"
)

ensure() {
  local name=$1 pkg=$2 version=$3
  local stamp="$bin/.$name.version" cached="$cache/$name@$version/$name"
  if [[ -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    return 0
  fi
  if [[ ! -x "$cached" ]]; then
    echo "tools: building $name $version (one-time, several minutes)..." >&2
    local tmp
    tmp=$(mktemp -d)
    if ! GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "$pkg@$version" >"$tmp/build.log" 2>&1; then
      echo "tools: building $name failed; last lines of the build log:" >&2
      tail -n 20 "$tmp/build.log" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$cached")"
    mv "$tmp/$name" "$cached"
    rm -rf "$tmp"
  fi
  cp -f "$cached" "$bin/$name"
  echo "$version" >"$stamp"
}

for spec in "${TOOLS[@]}"; do
  # shellcheck disable=SC2086
  ensure $spec
done

# npm packages the tests use as independent checkers (not ours, so they catch our mistakes):
# warcio.js reads our WARC files. Installed once per version into the cache, then copied.
ensure_npm() {
  local name=$1 version=$2
  local dest="$root/.tools/node" cached="$cache/npm-$name@$version"
  if [[ -f "$dest/node_modules/$name/package.json" && "$(cat "$dest/.$name.version" 2>/dev/null)" == "$version" ]]; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
      echo "tools: installing nodejs and npm from Debian..." >&2
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    else
      echo "tools: npm is needed for $name (install nodejs and npm)" >&2
      exit 1
    fi
  fi
  if [[ ! -f "$cached/node_modules/$name/package.json" ]]; then
    echo "tools: installing $name@$version from npm..." >&2
    mkdir -p "$cached"
    (cd "$cached" && npm install --silent --no-audit --no-fund --prefix "$cached" "$name@$version" >/dev/null 2>&1) || {
      echo "tools: npm install $name@$version failed" >&2
      exit 1
    }
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  cp -r "$cached/node_modules" "$dest/"
  echo "$version" >"$dest/.$name.version"
}

ensure_npm warcio 2.4.11
