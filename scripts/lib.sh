# Shell functions shared by stack.sh (one node of each service) and cluster.sh (several):
# process life cycle, PostgreSQL binaries, and a Temporal server's schema, configuration and
# namespace. Sourced, not run. The caller sets: who (the log prefix), run (PID files), logs,
# bin (.tools/bin).

say() { printf '%s: %s\n' "$who" "$*" >&2; }
die() { say "$*"; exit 1; }

running() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ "$st" != Z* ]]; }
alive() { [[ -f "$run/$1.pid" ]] && running "$(cat "$run/$1.pid")"; }

# wait_for NAME SECONDS CHECK...: polls CHECK until it succeeds; on timeout names the log. A
# process started by `start` that exits meanwhile ends the wait at once (PostgreSQL's, started
# by pg_ctl, is not watched).
wait_for() {
  local name=$1 secs=$2; shift 2
  local i
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [[ "$name" != postgres* && "$name" != pg-* ]] && ! alive "$name"; then
      say "$name exited during start-up; last lines of $logs/$name.log:"
      tail -n 20 "$logs/$name.log" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  say "$name is not healthy after ${secs}s; read its log in $logs:"
  tail -n 20 "$logs/$name.log" >&2 || true
  return 1
}

# TEMPORAL_GOGC: every Temporal server the scripts start runs its collector at 200, unless GOGC
# is set (at Go's 100 Temporal took 1.6 ms of CPU a page in two-minute bench runs, at 200 1.4;
# BENCHMARKS.md, issue 36). docker-compose.yml sets the same.
TEMPORAL_GOGC=${GOGC:-200}

# start NAME CMD...: runs CMD detached in its own session, PID in $run/NAME.pid.
start() {
  local name=$1; shift
  setsid "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
}

# gone_within_10s PID: waits until PID has exited, at most 10 s.
gone_within_10s() { for _ in $(seq 1 50); do running "$1" || return 0; sleep 0.2; done; }
# group_gone_within_10s PID: waits until no process of PID's group is left (a leader gone
# before its children: a Temporal dev server restarted at once found its metrics port still
# held, and its restart failed every other time in a series of bench runs).
group_gone_within_10s() { for _ in $(seq 1 50); do pgrep -g "$1" >/dev/null 2>&1 || return 0; sleep 0.2; done; }

# stop_pidfile NAME [SIGNAL]: SIGTERM (or SIGNAL) to the process group, SIGKILL after 10 s.
stop_pidfile() {
  local name=$1 sig=${2:-TERM}
  if alive "$name"; then
    local pid
    pid=$(cat "$run/$name.pid")
    kill "-$sig" -- "-$pid" 2>/dev/null || kill "-$sig" "$pid" 2>/dev/null || true
    gone_within_10s "$pid"
    kill -KILL -- "-$pid" 2>/dev/null || true
    # (and gone: a Temporal server on PostgreSQL killed after a long run still held its metrics
    # port when the next one started, which then failed to bind it)
    gone_within_10s "$pid"
    group_gone_within_10s "$pid"
    say "$name: stopped"
  fi
  rm -f "$run/$name.pid"
}

# ---- credentials ----------------------------------------------------------------------------
# secret NAME [VALUE]: the credential NAME under $root/.dev/secrets (mode 0600), made now if new
# (VALUE, or 24 random characters). The stack and the cluster make theirs on first start and
# `env` prints them: a local user other than you cannot log in to their Postgres (scram-sha-256,
# no trust) nor use MinIO with a published key.
secret() {
  local secrets="$root/.dev/secrets" f="$root/.dev/secrets/$1"
  if [[ ! -s "$f" ]]; then
    mkdir -p "$root/.dev" # (as any other run would make it: only secrets/ is private)
    (umask 077; mkdir -p "$secrets"
     if [[ -n "${2:-}" ]]; then printf '%s' "$2" >"$f"; else head -c 18 /dev/urandom | base64 | tr '+/' '-_' >"$f"; fi)
  fi
  # It goes into DATABASE_URL, SQL and YAML unquoted: a hand-made one must be as safe.
  grep -qE '^[A-Za-z0-9_-]+$' "$f" || die "$f: use letters, digits, '-' and '_' only"
  cat "$f"
}

# pg_initdb DATA: a new cluster in DATA whose user trawler has the password PG_PASSWORD.
pg_initdb() {
  local pwfile
  pwfile=$(mktemp)
  printf '%s\n' "$PG_PASSWORD" >"$pwfile"
  [[ $(id -u) == 0 ]] && chown postgres "$pwfile"
  as_pg "$PGBIN/initdb" -D "$1" -U trawler --auth=scram-sha-256 --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >"$logs/initdb.log" 2>&1 \
    || { rm -f "$pwfile"; tail -n 20 "$logs/initdb.log" >&2; die "postgres: initdb failed (see $logs/initdb.log)"; }
  rm -f "$pwfile"
}

# ---- PostgreSQL -----------------------------------------------------------------------------
pg_bindir() {
  if command -v initdb >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v initdb)")"; return; fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [[ -x "$d/initdb" ]] && { echo "$d"; return; }
  done
  return 1
}

# as_pg CMD...: initdb and postgres refuse to run as root, so root runs them as 'postgres'.
as_pg() {
  # From /: the postgres user may not be allowed into the caller's working directory.
  if [[ $(id -u) == 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# pg_home DIR NAME [SEED]: where PostgreSQL's files named NAME live: DIR, unless the 'postgres'
# user cannot reach DIR's parent (a clone under a private directory such as mktemp -d), then a
# directory under /var/tmp named after SEED (default DIR), so each clone has its own.
pg_home() {
  local dir=$1 name=$2 seed=${3:-$1}
  if [[ $(id -u) != 0 ]] || runuser -u postgres -- test -x "$(dirname "$dir")"; then echo "$dir"; return; fi
  echo "/var/tmp/trawler-$name-$(printf '%s' "$seed" | sha1sum | cut -c1-12)"
}

# ---- Temporal server on PostgreSQL ----------------------------------------------------------
# temporal_schema HOST PORT LOG: creates (once) and updates Temporal's two databases.
# TRAWLER_TEMPORAL_RESET=1 drops them first.
temporal_schema() {
  local host=$1 port=$2 log=$3 db dir
  local schema="$root/.tools/temporal-schema"
  # The password (PG_PASSWORD: the stack's; the cluster's nodes trust loopback) by environment:
  # not on a command line that ps shows.
  local sqltool=(env SQL_PASSWORD="${PG_PASSWORD:-}" "$bin/temporal-sql-tool" --plugin postgres12 --ep "$host" -p "$port" -u trawler)
  local psql=("$PGBIN/psql" -h "$host" -p "$port" -U trawler -d postgres)
  for db in temporal temporal_visibility; do
    if [[ "${TRAWLER_TEMPORAL_RESET:-}" == 1 ]]; then
      "${psql[@]}" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || die "temporal: dropping database $db failed"
    fi
    dir=temporal
    [[ $db == temporal_visibility ]] && dir=visibility
    if ! "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
      "${sqltool[@]}" --db "$db" create-database >>"$log" 2>&1 &&
        "${sqltool[@]}" --db "$db" setup-schema -v 0.0 >>"$log" 2>&1 || die "temporal: creating database $db failed (see $log)"
    fi
    "${sqltool[@]}" --db "$db" update-schema -d "$schema/$dir/versioned" >>"$log" 2>&1 \
      || die "temporal: updating the schema of $db failed (see $log)"
  done
}

# temporal_config DIR IP PORT PG_ADDRS SHARDS CONNS VCONNS RPC PPROF [METRICS]: writes DIR/config/development.yaml and
# DIR/dynamicconfig.yaml for one server process running every service on IP: frontend on PORT,
# history, matching and worker on the next three ports, their membership ports 1000 below.
# PG_ADDRS is host:port[,host:port…]; with several, connections go to the one that takes
# writes (a promoted standby). CONNS and VCONNS bound each service's pool to the history and
# the visibility database: a process runs four services, each with its pools. RPC, the
# cluster's address in its metadata, must be the same on every node. PPROF: the port of the
# server's profile (0: none); METRICS, of its Prometheus metrics (none if unset or 0).
# A history shard makes up to TRAWLER_TEMPORAL_SHARD_IO persistence calls at once (8; Temporal's
# default of 1 queues a shard's every commit behind the last: deploy/temporal/dynamicconfig.yaml).
# New tasks go to one partition of each task queue (deploy/temporal/dynamicconfig.yaml says why).
# TRAWLER_TEMPORAL_DYNAMIC (key=JSON-value pairs, space-separated) adds dynamic config values,
# as it does to the dev server.
temporal_config() {
  local dir=$1 ip=$2 port=$3 pg=$4 shards=$5 conns=$6 vconns=$7 rpc=$8 pprof=$9 metrics=${10:-0} svc kv
  mkdir -p "$dir/config"
  touch "$dir/config/development.yaml" && chmod 600 "$dir/config/development.yaml" # it holds the database password
  cat >"$dir/dynamicconfig.yaml" <<YAML
system.enableActivityEagerExecution:
  - value: true
system.enableEagerWorkflowStart:
  - value: true
limit.maxIDLength:
  - value: 1000
history.shardIOConcurrency:
  - value: ${TRAWLER_TEMPORAL_SHARD_IO:-8}
matching.numTaskqueueWritePartitions:
  - value: 1
YAML
  local kvs
  read -ra kvs <<<"${TRAWLER_TEMPORAL_DYNAMIC:-}" # (split on spaces, never globbed)
  for kv in "${kvs[@]}"; do # (JSON is YAML)
    printf '%s:\n  - value: %s\n' "${kv%%=*}" "${kv#*=}" >>"$dir/dynamicconfig.yaml"
  done
  store() { # a datastore's YAML: database, connections
    cat <<YAML
      sql:
        pluginName: postgres12_pgx
        databaseName: $1
        connectAddr: "$pg"
        connectProtocol: tcp
        user: trawler
        password: "${PG_PASSWORD:-}"
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: 1h
        connectAttributes:
          target_session_attrs: read-write
          connect_timeout: "2"
YAML
  }
  cat >"$dir/config/development.yaml" <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: $shards
  datastores:
    default:
$(store temporal "$conns")
    visibility:
$(store temporal_visibility "$vconns")
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: $ip
  pprof:
    port: $pprof
$(if [[ $metrics != 0 ]]; then printf '  metrics:\n    prometheus:\n      timerType: histogram\n      listenAddress: "%s:%s"\n' "$ip" "$metrics"; fi)
services:
YAML
  local p=$port
  for svc in frontend history matching worker; do
    printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnIP: %s\n' \
      "$svc" "$p" "$((p - 1000))" "$ip" >>"$dir/config/development.yaml"
    p=$((p + 1))
  done
  cat >>"$dir/config/development.yaml" <<YAML
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "$rpc"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: $dir/dynamicconfig.yaml
  pollInterval: 10s
YAML
}

# temporal_namespace NAME ADDRESS LOG: the namespace "default" with Trawler's search
# attributes, served by the frontend at ADDRESS (of the process NAME).
temporal_namespace() {
  local name=$1 addr=$2 log=$3 i
  local tctl=("$bin/temporal" operator --address "$addr")
  "${tctl[@]}" namespace describe --namespace default >/dev/null 2>&1 ||
    "${tctl[@]}" namespace create --namespace default --retention 72h >>"$log" 2>&1 || die "temporal: creating namespace default failed"
  for i in $(seq 1 50); do # the namespace reaches the frontend's cache within seconds
    "${tctl[@]}" search-attribute create --namespace default --name Host --type Keyword --name CrawlID --type Keyword \
      --name HostState --type Keyword >>"$log" 2>&1 && break
    "${tctl[@]}" search-attribute list --namespace default 2>/dev/null | grep -q HostState && break
    sleep 0.5
  done
  "${tctl[@]}" search-attribute list --namespace default 2>/dev/null | grep -q HostState || die "temporal: registering search attributes failed"
  # Workers that poll before the frontend's namespace cache knows "default" back off for long;
  # and a server on PostgreSQL refuses starts naming a search attribute its cache of them does
  # not know yet, after the list above already shows it (a crawl's start failed so): a query
  # by one waits for both.
  wait_for "$name" 60 "$bin/temporal" workflow list --address "$addr" --namespace default --limit 1 --query "CrawlID = 'ready'" \
    || die "temporal: namespace default, with its search attributes, is not served at $addr"
}
