#!/usr/bin/env bash
# The local stack, natively (no Docker): Temporal dev server, PostgreSQL and MinIO.
#   scripts/stack.sh up|down|status|logs|env
# State lives in .dev/ (data, logs, PID files); binaries in .tools/bin (scripts/tools.sh).
# `up` is idempotent: a service that is already healthy is left alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev="$root/.dev"
run="$dev/run"
logs="$dev/log"
bin="$root/.tools/bin"

who=stack
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"

TEMPORAL_PORT=${TRAWLER_TEMPORAL_PORT:-7233}
TEMPORAL_UI_PORT=${TRAWLER_TEMPORAL_UI_PORT:-8233}
# The dev server's Prometheus endpoint (what the server did: persistence requests, heartbeats,
# mutable-state writes; make bench counts them per page).
TEMPORAL_METRICS_PORT=${TRAWLER_TEMPORAL_METRICS_PORT:-7239}
PG_PORT=${TRAWLER_PG_PORT:-55432}
MINIO_PORT=${TRAWLER_MINIO_PORT:-9000}
MINIO_CONSOLE_PORT=${TRAWLER_MINIO_CONSOLE_PORT:-9001}

# Credentials (lib.sh's secret): a stack made before them kept its credentials: MinIO's key
# (its data is sealed with it), Postgres's trust turned into a password on its next start.
PG_PASSWORD=$(secret postgres) || exit 1
export PGPASSWORD=$PG_PASSWORD # psql and createdb below
LOCAL_DATABASE_URL="postgres://trawler:$PG_PASSWORD@127.0.0.1:$PG_PORT/trawler?sslmode=disable"
# external_db: the user pointed DATABASE_URL at their own server (not at ours, as `env` prints).
external_db() { [[ -n "${DATABASE_URL:-}" && "$DATABASE_URL" != *"@127.0.0.1:$PG_PORT/trawler"* ]]; }
export MINIO_ROOT_USER=${TRAWLER_S3_ACCESS_KEY:-trawler}
if [[ -d "$dev/minio/.minio.sys" && ! -s "$dev/secrets/minio" ]]; then
  secret minio trawler-dev-secret >/dev/null # an existing store keeps the key it was made with
fi
MINIO_SECRET=$(secret minio) || exit 1
export MINIO_ROOT_PASSWORD=${TRAWLER_S3_SECRET_KEY:-$MINIO_SECRET}


port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ---- Temporal -------------------------------------------------------------------------------
temporal_healthy() { "$bin/temporal" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT" --command-timeout 3s; }

# TRAWLER_TEMPORAL_DEV_OPTS adds flags to the dev server; TRAWLER_TEMPORAL_DYNAMIC (key=JSON-value
# pairs, space-separated) adds dynamic config values to either server.
# TRAWLER_TEMPORAL=postgres runs a Temporal server (scripts/tools.sh server) on our PostgreSQL
# instead of the SQLite dev server: make bench compares the two. Same port, no UI.
temporal_up() {
  local kv kvs dynamic=()
  if [[ "${TRAWLER_TEMPORAL:-dev}" != postgres ]]; then temporal_wal_check; fi
  if alive temporal && temporal_healthy >/dev/null 2>&1; then say "temporal: already up"; return; fi
  if [[ "${TRAWLER_TEMPORAL:-dev}" == postgres ]]; then temporal_sql_up; return; fi
  # WAL with synchronous=normal: no fsync per commit (a quarter of the dev server's CPU in the
  # crawl test); a killed server loses nothing, only an OS crash could lose the last commits.
  # Eager workflow start: a host's first workflow task comes back in its start's response
  # instead of queueing behind a crawl's thousand other starts. New tasks go to one partition of
  # each task queue (deploy/temporal/dynamicconfig.yaml says why). (The dev server reads its
  # search attributes afresh on every use: its cache, turned on, could miss the ones
  # registered below for a while, and visibility queries naming them then fail.)
  read -ra kvs <<<"${TRAWLER_TEMPORAL_DYNAMIC:-}" # (split on spaces, never globbed)
  for kv in "${kvs[@]}"; do dynamic+=(--dynamic-config-value "$kv"); done
  # TRAWLER_TEMPORAL_RESET=1 starts it empty.
  if [[ "${TRAWLER_TEMPORAL_RESET:-}" == 1 ]]; then rm -f "$dev"/temporal.db "$dev"/temporal.db-wal "$dev"/temporal.db-shm; fi
  start temporal env GOGC="$TEMPORAL_GOGC" "$bin/temporal" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" --metrics-port "$TEMPORAL_METRICS_PORT" \
    --db-filename "$dev/temporal.db" \
    --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
    --dynamic-config-value system.enableActivityEagerExecution=true \
    --dynamic-config-value system.enableEagerWorkflowStart=true \
    --dynamic-config-value limit.maxIDLength=1000 \
    --dynamic-config-value matching.numTaskqueueWritePartitions=1 \
    --search-attribute Host=Keyword --search-attribute CrawlID=Keyword \
    --search-attribute HostState=Keyword \
    "${dynamic[@]}" --log-level warn ${TRAWLER_TEMPORAL_DEV_OPTS:-}
  wait_for temporal 90 temporal_healthy || die "temporal failed to start"
  say "temporal: up on 127.0.0.1:$TEMPORAL_PORT (UI http://127.0.0.1:$TEMPORAL_UI_PORT)"
}

# temporal_wal_check warns of a large write-ahead log of the dev server, running or not. Under
# hours of crawling without a pause, SQLite's log is never checkpointed back to its start (a
# reader is always open) and grows until reads time out: the dev server is for development, a
# long crawl wants TRAWLER_TEMPORAL=postgres.
temporal_wal_check() {
  local wal
  wal=$(stat -c %s "$dev/temporal.db-wal" 2>/dev/null || echo 0)
  if ((wal > 1 << 30)) && [[ "${TRAWLER_TEMPORAL_RESET:-}" != 1 ]]; then
    say "temporal: warning: the dev server's write-ahead log is $((wal >> 20)) MB and slows every read; TRAWLER_TEMPORAL_RESET=1 $0 restart temporal starts it empty (its workflows are lost)"
  fi
}

temporal_sql_up() {
  external_db && die "temporal: TRAWLER_TEMPORAL=postgres uses the stack's own PostgreSQL"
  "$root/scripts/tools.sh" server
  PGBIN=$(pg_bindir) || die "temporal: no PostgreSQL binaries"
  pg_healthy || die "temporal: PostgreSQL is not up"
  local conf="$dev/temporal-sql"
  temporal_schema 127.0.0.1 "$PG_PORT" "$logs/temporal.log"
  # 32 connections a service: 4 shards, each with up to 8 persistence calls at once (lib.sh).
  temporal_config "$conf" 127.0.0.1 "$TEMPORAL_PORT" "127.0.0.1:$PG_PORT" "${TRAWLER_TEMPORAL_SHARDS:-4}" 32 4 \
    "127.0.0.1:$TEMPORAL_PORT" "${TRAWLER_TEMPORAL_PPROF_PORT:-7936}" "$TEMPORAL_METRICS_PORT"
  start temporal env GOGC="$TEMPORAL_GOGC" "$bin/temporal-server" --root "$conf" --config config --env development --allow-no-auth start
  wait_for temporal 90 temporal_healthy || die "temporal (PostgreSQL) failed to start"
  temporal_namespace temporal "127.0.0.1:$TEMPORAL_PORT" "$logs/temporal.log"
  say "temporal: Temporal server $("$bin/temporal-server" --version | awk '{print $NF}') on PostgreSQL, up on 127.0.0.1:$TEMPORAL_PORT"
}

# ---- PostgreSQL -----------------------------------------------------------------------------
# pg_data: the cluster lives in .dev/pg unless the 'postgres' user cannot reach it (a clone under
# a private directory such as mktemp -d), then in a per-clone directory under /var/tmp.
pg_data() { echo "$(pg_home "$dev/pg" pg "$root")/data"; }

pg_healthy() { "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; }

postgres_up() {
  if external_db; then say "postgres: using DATABASE_URL, not starting one"; return; fi
  if ! PGBIN=$(pg_bindir); then
    if [[ $(id -u) == 0 ]]; then
      say "postgres: no server binaries; installing Debian's postgresql package"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
        || die "postgres: apt-get install postgresql failed"
      PGBIN=$(pg_bindir) || die "postgres: still no initdb after installing postgresql"
    else
      die "postgres: no PostgreSQL server binaries (initdb). Install them (Debian: apt-get install postgresql) or set DATABASE_URL."
    fi
  fi
  export PGBIN
  local data sock pglog
  data=$(pg_data)
  sock="$(dirname "$data")/sock"
  if pg_healthy; then pg_no_trust "$data" "$sock"; pg_createdb; say "postgres: already up"; return; fi
  pglog="$(dirname "$data")/postgres.log"
  mkdir -p "$sock" "$data"
  [[ $(id -u) == 0 ]] && chown postgres "$sock" "$data" "$(dirname "$data")"
  ln -sfn "$pglog" "$logs/postgres.log" 2>/dev/null || true
  [[ -f "$data/PG_VERSION" ]] || pg_initdb "$data"
  # Checkpoints 15 minutes or 8 GB of WAL apart, full-page images compressed: with the default
  # 1 GB a crawl's random-keyed index inserts (URL hashes) filled the WAL in 14 s after 50
  # minutes of the hour-long run, and each page an insert touched went to the WAL whole after
  # every checkpoint: 24 KB of WAL a page fetched at minute 15, 64 KB at minute 55 (BENCHMARKS.md,
  # 2026-11-28 03:58). Shared buffers of 2 GB (TRAWLER_PG_SHARED_BUFFERS): with 256 MB, from
  # minute 15 of the hour-long run the crawl's random index pages no longer fitted, and
  # backends evicted and wrote back 1-2 GB of dirty pages a minute themselves (pg_stat_bgwriter's
  # buffers_backend; BENCHMARKS.md, 2026-11-28 07:23).
  as_pg "$PGBIN/pg_ctl" -D "$data" -l "$pglog" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $sock -c max_connections=200 -c shared_buffers=${TRAWLER_PG_SHARED_BUFFERS:-2GB} -c fsync=${TRAWLER_PG_FSYNC:-on} -c max_wal_size=8GB -c checkpoint_timeout=15min -c wal_compression=lz4 ${TRAWLER_PG_EXTRA_OPTS:-}" \
    >/dev/null || { tail -n 20 "$pglog" >&2; die "postgres: failed to start (see $pglog)"; }
  head -n 1 "$data/postmaster.pid" >"$run/postgres.pid"
  wait_for postgres 30 pg_healthy || die "postgres failed to start"
  pg_no_trust "$data" "$sock"
  pg_createdb
  say "postgres: up on 127.0.0.1:$PG_PORT"
}

# pg_no_trust DATA SOCK: a cluster made with --auth=trust (before credentials) gets the
# password and scram-sha-256 in place of trust, once.
pg_no_trust() {
  local data=$1 sock=$2
  as_pg grep -qE '^[^#]*[[:space:]]trust([[:space:]]|$)' "$data/pg_hba.conf" || return 0
  say "postgres: replacing trust with a password (in $dev/secrets/postgres)"
  # On standard input: a command line shows in ps to every local user.
  printf "ALTER USER trawler PASSWORD '%s'\n" "$PG_PASSWORD" | as_pg "$PGBIN/psql" -h "$sock" -p "$PG_PORT" -U trawler -d postgres -qtA -f - >/dev/null \
    || die "postgres: could not set the password"
  as_pg sed -i -E '/^[^#]/s/([[:space:]])trust([[:space:]]|$)/\1scram-sha-256\2/' "$data/pg_hba.conf"
  as_pg "$PGBIN/pg_ctl" -D "$data" reload >/dev/null || die "postgres: reload after the pg_hba change failed"
}

pg_createdb() {
  if ! "$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U trawler -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='trawler'" | grep -q 1; then
    "$PGBIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U trawler trawler || die "postgres: createdb trawler failed"
  fi
}

postgres_down() {
  local data
  data=$(pg_data)
  [[ -f "$data/postmaster.pid" ]] || { rm -f "$run/postgres.pid"; return; }
  PGBIN=$(pg_bindir) || return
  as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  rm -f "$run/postgres.pid"
  say "postgres: stopped"
}

# ---- MinIO ----------------------------------------------------------------------------------
minio_healthy() { curl -fsS -m 2 "http://127.0.0.1:$MINIO_PORT/minio/health/live"; }

minio_up() {
  if alive minio && minio_healthy >/dev/null 2>&1; then say "minio: already up"; return; fi
  mkdir -p "$dev/minio"
  MINIO_BROWSER=on MINIO_UPDATE=off start minio "$bin/minio" server "$dev/minio" \
    --address "127.0.0.1:$MINIO_PORT" --console-address "127.0.0.1:$MINIO_CONSOLE_PORT" --quiet
  wait_for minio 60 minio_healthy || die "minio failed to start"
  say "minio: up on 127.0.0.1:$MINIO_PORT (console http://127.0.0.1:$MINIO_CONSOLE_PORT)"
}

# ---- generic --------------------------------------------------------------------------------
status_line() {
  local name=$1 healthy=$2 addr=$3
  local pid="-"
  [[ -f "$run/$name.pid" ]] && pid=$(cat "$run/$name.pid")
  if $healthy >/dev/null 2>&1; then printf '%-9s up     pid %-8s %s\n' "$name" "$pid" "$addr"
  else printf '%-9s down   pid %-8s %s\n' "$name" "$pid" "$addr"; fi
}

print_env() {
  cat <<ENV
export TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PORT
export DATABASE_URL='$(if external_db; then echo "$DATABASE_URL"; else echo "$LOCAL_DATABASE_URL"; fi)'
export TRAWLER_S3_ENDPOINT=127.0.0.1:$MINIO_PORT
export TRAWLER_S3_ACCESS_KEY=$MINIO_ROOT_USER
export TRAWLER_S3_SECRET_KEY=$MINIO_ROOT_PASSWORD
ENV
}

mkdir -p "$run" "$logs"
case "${1:-}" in
  up)
    "$root/scripts/tools.sh"
    postgres_up
    minio_up
    temporal_up
    ;;
  down)
    stop_pidfile temporal
    stop_pidfile minio
    postgres_down
    ;;
  status)
    PGBIN=$(pg_bindir || echo /usr/bin)
    export PGBIN
    status_line temporal temporal_healthy "127.0.0.1:$TEMPORAL_PORT  UI http://127.0.0.1:$TEMPORAL_UI_PORT"
    if external_db; then echo "postgres  external (DATABASE_URL)"
    else status_line postgres pg_healthy "127.0.0.1:$PG_PORT"; fi
    status_line minio minio_healthy "127.0.0.1:$MINIO_PORT  console http://127.0.0.1:$MINIO_CONSOLE_PORT"
    ;;
  logs)
    exec tail -n 50 -F "$logs"/temporal.log "$(dirname "$(pg_data)")/postgres.log" "$logs"/minio.log
    ;;
  env)
    print_env
    ;;
  start|stop|restart)
    # One service at a time (fault injection: make chaos). start/restart need the tools built.
    svc=${2:-}
    case "$svc" in temporal|postgres|minio) ;; *) die "usage: $0 start|stop|restart temporal|postgres|minio" ;; esac
    if [[ $1 != start ]]; then
      if [[ $svc == postgres ]]; then postgres_down; else stop_pidfile "$svc"; fi
    fi
    if [[ $1 != stop ]]; then "${svc}_up"; fi
    ;;
  *)
    echo "usage: $0 up|down|status|logs|env|start SERVICE|stop SERVICE|restart SERVICE" >&2
    exit 2
    ;;
esac
