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
# `scripts/tools.sh server` adds a Temporal server for PostgreSQL and its schema tool (make
# bench's "Temporal on PostgreSQL" scenario); the tests do not need them.
TEMPORAL_SERVER_VERSION=v1.29.1
SERVER_TOOLS=(
  "temporal-server go.temporal.io/server/cmd/server $TEMPORAL_SERVER_VERSION"
  "temporal-sql-tool go.temporal.io/server/cmd/tools/sql $TEMPORAL_SERVER_VERSION"
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
    mv "$tmp/$(basename "$pkg")" "$cached"
    rm -rf "$tmp"
  fi
  cp -f "$cached" "$bin/$name"
  echo "$version" >"$stamp"
}

if [[ "${1:-}" == server ]]; then
  for spec in "${SERVER_TOOLS[@]}"; do
    # shellcheck disable=SC2086
    ensure $spec
  done
  # The server's SQL schema ships in its module, which the build downloaded.
  dir=$(go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$dir/schema/postgresql/v12" ]] || { echo "tools: no PostgreSQL schema in go.temporal.io/server@$TEMPORAL_SERVER_VERSION" >&2; exit 1; }
  rm -rf "$root/.tools/temporal-schema"
  mkdir -p "$root/.tools/temporal-schema"
  cp -r "$dir/schema/postgresql/v12/." "$root/.tools/temporal-schema/"
  chmod -R u+w "$root/.tools/temporal-schema"
  exit 0
fi

for spec in "${TOOLS[@]}"; do
  # shellcheck disable=SC2086
  ensure $spec
done

# npm packages the tests use as independent checkers (not ours, so they catch our mistakes):
# warcio.js reads our WARC files. Installed once per version into the cache, then copied.
ensure_npm() {
  local name=$1 version=$2 dest="$root/.tools/${3:-node}"
  local cached="$cache/npm-${name//\//_}@$version" stamp="$root/.tools/${3:-node}/.${name//\//_}.version"
  if [[ -f "$dest/node_modules/$name/package.json" && "$(cat "$stamp" 2>/dev/null)" == "$version" ]]; then
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
  echo "$version" >"$stamp"
}

ensure_npm warcio 2.4.11
# DuckDB (its Node package and the platform's prebuilt engine, both from npm) reads the Parquet
# datasets deliveries write, as a user's tool would: hive partitions, no Trawler code.
ensure_npm @duckdb/node-api 1.5.6-r.1 duckdb

# ReplayWeb.page replays our WACZ files in the tests (a real client, served on loopback and
# opened in headless Chromium). Its package ships bundled ui.js and sw.js, so the tarball is
# all it needs: `npm pack`, not an install of its dependency tree. AGPL: a test tool here,
# never part of what we ship.
ensure_npm_pack() {
  local name=$1 version=$2
  local dest="$root/.tools/$name" cached="$cache/npm-pack-$name@$version"
  if [[ -f "$dest/package.json" && "$(cat "$dest/.version" 2>/dev/null)" == "$version" ]]; then
    return 0
  fi
  if [[ ! -f "$cached/package/package.json" ]]; then
    echo "tools: fetching $name@$version from npm..." >&2
    rm -rf "$cached" && mkdir -p "$cached"
    (cd "$cached" && npm pack --silent "$name@$version" >/dev/null 2>&1 && tar xzf ./*.tgz) || {
      echo "tools: npm pack $name@$version failed" >&2
      exit 1
    }
  fi
  rm -rf "$dest"
  cp -r "$cached/package" "$dest"
  echo "$version" >"$dest/.version"
}

ensure_npm_pack replaywebpage 2.5.3

# poppler-utils reads PDFs for the process role (pdftotext, pdfinfo): from Debian when we may
# install packages; without it PDFs are stored and marked not read, and the PDF tests fail.
if ! command -v pdftotext >/dev/null 2>&1 || ! command -v pdfinfo >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "tools: installing poppler-utils from Debian..." >&2
    (apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null) || {
      echo "tools: apt-get install poppler-utils failed" >&2
      exit 1
    }
  else
    echo "tools: poppler-utils (pdftotext, pdfinfo) is not installed: PDFs will not be read" >&2
  fi
fi

# Chromium drives the render role (headless, over CDP): from Debian when we may install
# packages; without it the render role does not start and its tests fail under CI.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "tools: installing chromium from Debian..." >&2
    (apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || {
      echo "tools: apt-get install chromium failed" >&2
      exit 1
    }
  else
    echo "tools: chromium is not installed: the render role cannot start" >&2
  fi
fi

# A real documentation site for the replay fidelity test: Python's HTML manual from Debian
# (python3.11-doc: Sphinx pages with real stylesheets, scripts and images), with the jQuery and
# Underscore packages its _static symlinks point into, unpacked (not installed) under
# .tools/pydoc and served on loopback as docs.test by the test web.
ensure_deb_tree() {
  local dest="$root/.tools/pydoc" marker="python3.11-doc libjs-jquery libjs-underscore"
  if [[ -f "$dest/.version" && "$(cat "$dest/.version")" == "$marker" ]]; then
    return 0
  fi
  local debs="$cache/debs-pydoc"
  if ! ls "$debs"/python3.11-doc_*.deb >/dev/null 2>&1; then
    echo "tools: fetching the Python manual (python3.11-doc) from Debian..." >&2
    rm -rf "$debs" && mkdir -p "$debs"
    (cd "$debs" && { apt-get download $marker >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get download $marker >/dev/null 2>&1; }; }) || {
      # Not fatal: only the replay fidelity test needs it, and it says what is missing.
      echo "tools: apt-get download $marker failed: the replay fidelity test will fail" >&2
      return 0
    }
  fi
  rm -rf "$dest" && mkdir -p "$dest"
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$dest"
  done
  echo "$marker" >"$dest/.version"
}

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
  ensure_deb_tree
else
  echo "tools: no apt-get/dpkg-deb: the Python manual (replay fidelity test) is not unpacked" >&2
fi
