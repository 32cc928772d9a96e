#!/usr/bin/env bash
# A cluster on loopback: every engine as several real processes, each on an address of its own
# (127.0.0.2, 127.0.0.3, …), which is what a cluster is to the software. From the binaries the
# stack installs (scripts/tools.sh, and `tools.sh server` for the Temporal server).
#   scripts/cluster.sh up|down|status|env|layout|logs
#   scripts/cluster.sh kill|start temporal N     SIGKILL / start Temporal node N
#   scripts/cluster.sh stop|start minio N        MinIO node N
#   scripts/cluster.sh failover                  stop the PostgreSQL primary, promote the standby
#                                                (the next `up` rebuilds the old one as its standby)
#   scripts/cluster.sh stop|kill|start worker NAME  a worker process (up starts workflow-1, fetch-1,
#                                                fetch-2, process-1; TRAWLER_CLUSTER_WORKERS=0: none)
# `down --purge` also deletes the cluster's data. State lives in .dev/cluster/.
#
# The layout below is the one place it is written: `layout` prints it, the README's "Running at
# scale" is that output (a test compares them), and docker-compose.yml has the same services.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
home="$root/.dev/cluster"
run="$home/run"
logs="$home/log"
bin="$root/.tools/bin"
who=cluster
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"

# ---- the layout -----------------------------------------------------------------------------
# Temporal: each node runs frontend, history, matching and worker services on its own address:
# gRPC on 7233-7236, ringpop membership on 6233-6236. Members find each other through the
# cluster_membership table in PostgreSQL; shards are spread over the members by ringpop.
TEMPORAL_NODES=(127.0.0.2 127.0.0.3 127.0.0.4)
TEMPORAL_PORT=7233
TEMPORAL_SHARDS=${TRAWLER_CLUSTER_SHARDS:-12}
# MinIO: 4 nodes × 1 drive, one erasure set (EC:2, so one node down loses nothing, reads or
# writes). Each node has a port of its own: MinIO also listens on 127.0.0.1 at its port.
MINIO_NODES=(127.0.0.2:9102 127.0.0.3:9103 127.0.0.4:9104 127.0.0.5:9105)
# PostgreSQL: a primary and a streaming-replication standby; clients list both and connect to
# the one that takes writes (target_session_attrs=read-write), so a promotion needs no change.
PG_NODES=(127.0.0.2 127.0.0.3)
PG_PORT=55432
WORKERS=(workflow-1 fetch-1 fetch-2 process-1)

# Credentials of their own, made on first start (lib.sh's secret), printed by `env`.
PG_PASSWORD=$(secret cluster-postgres) || exit 1
export PG_PASSWORD PGPASSWORD=$PG_PASSWORD # psql, pg_basebackup, and Temporal's config (lib.sh)
export MINIO_ROOT_USER=${TRAWLER_S3_ACCESS_KEY:-trawler}
MINIO_SECRET=$(secret cluster-minio) || exit 1
export MINIO_ROOT_PASSWORD=${TRAWLER_S3_SECRET_KEY:-$MINIO_SECRET}

join() { local IFS=,; echo "$*"; }
since() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $1}"; } # seconds since an $EPOCHREALTIME
temporal_addrs() { local ip out=(); for ip in "${TEMPORAL_NODES[@]}"; do out+=("$ip:$TEMPORAL_PORT"); done; join "${out[@]}"; }
pg_addrs() { local ip out=(); for ip in "${PG_NODES[@]}"; do out+=("$ip:$PG_PORT"); done; join "${out[@]}"; }

print_env() {
  cat <<ENV
export TEMPORAL_ADDRESS=$(temporal_addrs)
export DATABASE_URL='postgres://trawler:${PG_PASSWORD}@$(pg_addrs)/trawler?sslmode=disable&target_session_attrs=read-write&connect_timeout=2'
export TRAWLER_S3_ENDPOINT=$(join "${MINIO_NODES[@]}")
export TRAWLER_S3_ACCESS_KEY=$MINIO_ROOT_USER
export TRAWLER_S3_SECRET_KEY=$MINIO_ROOT_PASSWORD
ENV
}

# layout: what listens where, what each process needs, what is shared (README "Running at scale").
print_layout() {
  local i ip
  echo '| process | listens on | needs |'
  echo '|---|---|---|'
  for i in "${!PG_NODES[@]}"; do
    if ((i == 0)); then
      echo "| PostgreSQL primary | \`${PG_NODES[0]}:$PG_PORT\` | \`wal_level=replica\`, \`max_wal_senders\`, a \`replication\` line in pg_hba.conf for the standby |"
    else
      echo "| PostgreSQL standby $i | \`${PG_NODES[i]}:$PG_PORT\` | \`pg_basebackup -R -X stream\` of the primary, the primary's \`max_connections\`; \`pg_ctl promote\` makes it the primary |"
    fi
  done
  for i in "${!TEMPORAL_NODES[@]}"; do
    ip=${TEMPORAL_NODES[i]}
    echo "| Temporal node $((i + 1)) (frontend, history, matching, worker) | \`$ip:$TEMPORAL_PORT-$((TEMPORAL_PORT + 3))\` gRPC, \`$ip:$((TEMPORAL_PORT - 1000))-$((TEMPORAL_PORT - 997))\` membership | PostgreSQL (\`$(pg_addrs)\`, databases \`temporal\`, \`temporal_visibility\`); \`bindOnIP\` and \`broadcastAddress\` = \`$ip\`; the other nodes' membership ports |"
  done
  for i in "${!MINIO_NODES[@]}"; do
    echo "| MinIO node $((i + 1)) | \`${MINIO_NODES[i]}\` | every node's drive URL, in the same order on each: \`$(minio_urls /data)\` |"
  done
  echo "| trawler-worker (any roles, any number) | \`127.0.0.1\` metrics (\`TRAWLER_METRICS_ADDR\`) | the three lists below |"
  echo
  echo 'What every worker and `trawler` command is given (`scripts/cluster.sh env`):'
  echo
  echo '```sh'
  print_env | grep -v SECRET_KEY | sed -E 's|trawler:[A-Za-z0-9_-]+@|trawler:PASSWORD@|' # (each machine's own)
  echo '```'
}

# minio_urls [DIR]: every node's drive URL, the same on each node (DIR: where drives live).
minio_urls() {
  local i out=()
  for i in "${!MINIO_NODES[@]}"; do out+=("http://${MINIO_NODES[i]}${1:-$home}/minio-$((i + 1))"); done
  echo "${out[*]}"
}

# ---- PostgreSQL -----------------------------------------------------------------------------
pg_dir() { pg_home "$home/pg-$1" "cluster-pg-$1" "$root"; }
pg_ready() { "$PGBIN/pg_isready" -q -h "${PG_NODES[$1 - 1]}" -p "$PG_PORT"; }
pg_psql() { "$PGBIN/psql" -h "${PG_NODES[$1 - 1]}" -p "$PG_PORT" -U trawler -d postgres -tAqc "$2"; }

pg_start() { # pg_start N
  local n=$1 dir
  dir=$(pg_dir "$n")
  ln -sfn "$dir/postgres.log" "$logs/pg-$n.log" 2>/dev/null || true
  as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start \
    -o "-c listen_addresses=${PG_NODES[n - 1]} -p $PG_PORT -k $dir/sock -c max_connections=300 -c shared_buffers=128MB -c wal_level=replica -c max_wal_senders=8 -c hot_standby=on" \
    >/dev/null || { tail -n 20 "$dir/postgres.log" >&2; die "postgres node $n failed to start (see $dir/postgres.log)"; }
  wait_for "pg-$n" 30 pg_ready "$n" || die "postgres node $n is not ready"
  head -n 1 "$dir/data/postmaster.pid" >"$run/pg-$n.pid" # for make bench-cluster's CPU per node
}

# pg_node_up N primary | pg_node_up N standby P: node N as the primary (initdb on first start)
# or as a standby of node P (a base backup of it on first start). A node that was the primary
# before a failover is rebuilt as a standby: started from its own data it would be a second
# primary, listed first in every client's DSN.
pg_node_up() {
  local n=$1 role=$2 p=${3:-} dir
  dir=$(pg_dir "$n")
  pg_ready "$n" 2>/dev/null && return 0
  if [[ $role == standby && -f "$dir/data/PG_VERSION" && ! -f "$dir/data/standby.signal" ]]; then
    say "postgres node $n was the primary before the failover to node $p: rebuilding it as node $p's standby"
    rm -rf "$dir/data"
  fi
  mkdir -p "$dir/sock" "$dir/data" && chmod 700 "$dir/data"
  [[ $(id -u) == 0 ]] && chown postgres "$dir" "$dir/sock" "$dir/data"
  if [[ ! -f "$dir/data/PG_VERSION" ]]; then
    if [[ $role == primary ]]; then
      pg_initdb "$dir/data"
      printf 'host all all 127.0.0.0/8 scram-sha-256\nhost replication all 127.0.0.0/8 scram-sha-256\n' | as_pg tee -a "$dir/data/pg_hba.conf" >/dev/null
    else
      as_pg "$PGBIN/pg_basebackup" -h "${PG_NODES[p - 1]}" -p "$PG_PORT" -U trawler -D "$dir/data" -R -X stream -c fast \
        >>"$logs/pg-$n-basebackup.log" 2>&1 || die "postgres: base backup for node $n failed (see $logs/pg-$n-basebackup.log)"
    fi
  fi
  pg_start "$n"
  if [[ $role == primary ]] && ! pg_psql "$n" "SELECT 1 FROM pg_database WHERE datname='trawler'" | grep -q 1; then
    pg_psql "$n" "CREATE DATABASE trawler" >/dev/null || die "postgres: CREATE DATABASE trawler failed"
  fi
}

# The primary of record: node 1, or the node the last failover promoted.
pg_primary_of_record() { cat "$home/pg-primary" 2>/dev/null || echo 1; }

pg_up() {
  PGBIN=$(pg_bindir) || die "no PostgreSQL server binaries: run scripts/stack.sh up once (it installs them)"
  export PGBIN
  local n p
  p=$(pg_primary_of_record)
  pg_node_up "$p" primary
  for n in $(seq 1 ${#PG_NODES[@]}); do
    [[ $n == "$p" ]] || pg_node_up "$n" standby "$p"
  done
  say "postgres: primary ${PG_NODES[p - 1]}:$PG_PORT (node $p), the other nodes streaming from it"
}

pg_stop() { # pg_stop N [MODE]
  local dir
  dir=$(pg_dir "$1")
  [[ -f "$dir/data/postmaster.pid" ]] || return 0
  as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
  rm -f "$run/pg-$1.pid"
  say "postgres node $1: stopped"
}

# primary: the node that takes writes now (1-based), or nothing.
primary() {
  local n
  for n in $(seq 1 ${#PG_NODES[@]}); do
    [[ "$(pg_psql "$n" 'SELECT pg_is_in_recovery()' 2>/dev/null)" == f ]] && { echo "$n"; return; }
  done
  return 0
}

failover() {
  local old new n t0
  old=$(primary)
  [[ -n "$old" ]] || die "failover: no primary is up"
  new=
  for n in $(seq 1 ${#PG_NODES[@]}); do
    if [[ $n != "$old" ]] && pg_ready "$n"; then new=$n; break; fi
  done
  [[ -n "$new" ]] || die "failover: no standby is up"
  t0=$EPOCHREALTIME
  pg_stop "$old" fast
  as_pg "$PGBIN/pg_ctl" -D "$(pg_dir "$new")/data" -w promote >/dev/null || die "failover: promoting node $new failed"
  echo "$new" >"$home/pg-primary" # `up` brings the old primary back as its standby
  say "postgres: node $new (${PG_NODES[new - 1]}) promoted in $(since "$t0")s; node $old stopped"
}

# ---- MinIO ----------------------------------------------------------------------------------
minio_healthy() { curl -fsS -m 2 "http://$1/minio/health/cluster"; } # the set has write quorum
minio_live() { curl -fsS -m 2 "http://${MINIO_NODES[$1 - 1]}/minio/health/live"; }  # node N answers

minio_start() { # minio_start N
  local n=$1 addr=${MINIO_NODES[$1 - 1]}
  mkdir -p "$home/minio-$n"
  # MINIO_CI_CD: drives on the root file system are allowed. _MINIO_SERVER_LOCAL: which of the
  # endpoints is this node (MinIO cannot tell by its addresses in a container).
  # shellcheck disable=SC2046
  MINIO_CI_CD=1 MINIO_BROWSER=off MINIO_UPDATE=off _MINIO_SERVER_LOCAL=$addr start "minio-$n" "$bin/minio" server \
    --address "$addr" --quiet $(minio_urls)
}

minio_up() {
  local n
  for n in $(seq 1 ${#MINIO_NODES[@]}); do alive "minio-$n" || minio_start "$n"; done
  wait_for minio-1 90 minio_healthy "${MINIO_NODES[0]}" || die "minio: no write quorum"
  say "minio: ${#MINIO_NODES[@]} nodes, one erasure set, up on $(join "${MINIO_NODES[@]}")"
}

# ---- Temporal -------------------------------------------------------------------------------
temporal_healthy() { "$bin/temporal" operator cluster health --address "$1:$TEMPORAL_PORT" --command-timeout 3s; }

temporal_start() { # temporal_start N
  local n=$1 dir="$home/temporal-$1"
  temporal_config "$dir" "${TEMPORAL_NODES[n - 1]}" "$TEMPORAL_PORT" "$(pg_addrs)" "$TEMPORAL_SHARDS" 6 2 "${TEMPORAL_NODES[0]}:$TEMPORAL_PORT" 0
  start "temporal-$n" env GOGC="$TEMPORAL_GOGC" "$bin/temporal-server" --root "$dir" --config config --env development --allow-no-auth start
}

temporal_up() {
  "$root/scripts/tools.sh" server
  local n p
  p=$(primary)
  [[ -n "$p" ]] || die "temporal: no PostgreSQL primary"
  temporal_schema "${PG_NODES[p - 1]}" "$PG_PORT" "$logs/temporal-schema.log"
  # The first node alone first: it writes the cluster's metadata, which the others then read
  # (started together, they race to insert it and the losers exit).
  for n in $(seq 1 ${#TEMPORAL_NODES[@]}); do
    alive "temporal-$n" || temporal_start "$n"
    ((n > 1)) || wait_for temporal-1 120 temporal_healthy "${TEMPORAL_NODES[0]}" || die "temporal node 1 failed to start"
  done
  for n in $(seq 2 ${#TEMPORAL_NODES[@]}); do
    wait_for "temporal-$n" 120 temporal_healthy "${TEMPORAL_NODES[n - 1]}" || die "temporal node $n failed to start"
  done
  temporal_namespace temporal-1 "${TEMPORAL_NODES[0]}:$TEMPORAL_PORT" "$logs/temporal-1.log"
  say "temporal: ${#TEMPORAL_NODES[@]} nodes, $TEMPORAL_SHARDS history shards, up on $(temporal_addrs)"
}

# ---- workers --------------------------------------------------------------------------------
# worker_start NAME: trawler-worker with the role NAME starts with, on the cluster's lists.
worker_start() {
  local name=$1
  [[ -x "$root/bin/trawler-worker" ]] || die "no bin/trawler-worker: run make build"
  eval "$(print_env)"
  TRAWLER_ROLES=${name%-*} start "worker-$name" "$root/bin/trawler-worker"
}

workers_up() {
  [[ "${TRAWLER_CLUSTER_WORKERS:-1}" == 0 ]] && return
  local w
  for w in "${WORKERS[@]}"; do alive "worker-$w" || worker_start "$w"; done
  say "workers: ${WORKERS[*]} (logs in $logs)"
}

# ---- all ------------------------------------------------------------------------------------
status() {
  PGBIN=$(pg_bindir || echo /usr/bin)
  local n p
  p=$(primary)
  for n in $(seq 1 ${#PG_NODES[@]}); do
    if [[ "$n" == "$p" ]]; then echo "pg-$n        primary  ${PG_NODES[n - 1]}:$PG_PORT"
    elif pg_ready "$n" 2>/dev/null; then echo "pg-$n        standby  ${PG_NODES[n - 1]}:$PG_PORT"
    else echo "pg-$n        down     ${PG_NODES[n - 1]}:$PG_PORT"; fi
  done
  for n in $(seq 1 ${#TEMPORAL_NODES[@]}); do
    if temporal_healthy "${TEMPORAL_NODES[n - 1]}" >/dev/null 2>&1; then echo "temporal-$n  up       ${TEMPORAL_NODES[n - 1]}:$TEMPORAL_PORT"
    else echo "temporal-$n  down     ${TEMPORAL_NODES[n - 1]}:$TEMPORAL_PORT"; fi
  done
  for n in $(seq 1 ${#MINIO_NODES[@]}); do
    if alive "minio-$n" && minio_live "$n" >/dev/null 2>&1; then
      echo "minio-$n     up       ${MINIO_NODES[n - 1]}"
    else echo "minio-$n     down     ${MINIO_NODES[n - 1]}"; fi
  done
  for n in "${WORKERS[@]}"; do
    if alive "worker-$n"; then echo "worker-$n up (pid $(cat "$run/worker-$n.pid"))"; fi
  done
}

down() {
  local n
  for n in "${WORKERS[@]}"; do stop_pidfile "worker-$n"; done
  for n in $(seq 1 ${#TEMPORAL_NODES[@]}); do stop_pidfile "temporal-$n"; done
  for n in $(seq 1 ${#MINIO_NODES[@]}); do stop_pidfile "minio-$n"; done
  if PGBIN=$(pg_bindir); then
    for n in $(seq 1 ${#PG_NODES[@]}); do pg_stop "$n"; done
  fi
  if [[ "${1:-}" == --purge ]]; then
    for n in $(seq 1 ${#PG_NODES[@]}); do rm -rf "$(pg_dir "$n")"; done
    rm -rf "$home"
    say "data deleted"
  fi
}

node() { # node N COUNT: N checked against the count of nodes
  [[ "$1" =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= $2)) || die "no node $1 (1 to $2)"
}

mkdir -p "$run" "$logs"
case "${1:-}" in
  up)
    "$root/scripts/tools.sh"
    pg_up
    minio_up
    temporal_up
    workers_up
    ;;
  down) down "${2:-}" ;;
  status) status ;;
  env) print_env ;;
  layout) print_layout ;;
  logs) exec tail -n 20 -F "$logs"/*.log ;;
  failover)
    PGBIN=$(pg_bindir) || die "no PostgreSQL binaries"
    failover
    ;;
  kill | stop | start)
    verb=$1 svc=${2:-} n=${3:-}
    case "$verb $svc" in
      "kill temporal")
        node "$n" ${#TEMPORAL_NODES[@]}
        stop_pidfile "temporal-$n" KILL
        ;;
      "start temporal")
        node "$n" ${#TEMPORAL_NODES[@]}
        t0=$EPOCHREALTIME
        alive "temporal-$n" || temporal_start "$n"
        wait_for "temporal-$n" 120 temporal_healthy "${TEMPORAL_NODES[n - 1]}" || die "temporal node $n failed to start"
        say "temporal node $n: up, serving in $(since "$t0")s"
        ;;
      "stop minio")
        node "$n" ${#MINIO_NODES[@]}
        stop_pidfile "minio-$n"
        ;;
      "start minio")
        node "$n" ${#MINIO_NODES[@]}
        t0=$EPOCHREALTIME
        alive "minio-$n" || minio_start "$n"
        wait_for "minio-$n" 60 minio_live "$n" || die "minio node $n failed to start"
        say "minio node $n: up in $(since "$t0")s"
        ;;
      "stop worker" | "kill worker") stop_pidfile "worker-$n" "$([[ $verb == kill ]] && echo KILL || echo TERM)" ;;
      "start worker") alive "worker-$n" || worker_start "$n" ;;
      *) die "usage: $0 kill|start temporal N | stop|start minio N | stop|kill|start worker NAME" ;;
    esac
    ;;
  *)
    echo "usage: $0 up|down [--purge]|status|env|layout|logs|failover|kill|stop|start SERVICE N" >&2
    exit 2
    ;;
esac
