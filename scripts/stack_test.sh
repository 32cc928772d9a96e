#!/usr/bin/env bash
# Checks the stack's life cycle: `up` twice changes nothing, `down` leaves no process behind,
# and a second `up` keeps the data. Run by `make test` after the Go tests (it stops the stack).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run=.dev/run
eval "$(scripts/stack.sh env)"
fail() { echo "stack_test: FAIL: $*" >&2; exit 1; }
pids() { cat $run/temporal.pid $run/minio.pid $run/postgres.pid 2>/dev/null | tr '\n' ' '; }
# running: the process exists and is not a zombie (a zombie has exited; only its parent has
# not collected it yet).
running() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ "$st" != Z* ]]; }
psql_q() { psql "$DATABASE_URL" -tAc "$1"; }

scripts/stack.sh up
before=$(pids)
scripts/stack.sh up
after=$(pids)
[[ "$before" == "$after" ]] || fail "second up restarted something: '$before' -> '$after'"
echo "stack_test: ok: second 'up' left every service as it was ($after)"

# Credentials: made on first start, private, and needed: a local connection without the
# password is refused (no trust), as is the MinIO key everyone knows (unless this stack was
# made with it, before credentials).
for f in .dev/secrets/postgres .dev/secrets/minio; do
  [[ "$(stat -c %a "$f")" == 600 ]] || fail "$f has mode $(stat -c %a "$f"), want 600"
done
pg_port=${DATABASE_URL##*@127.0.0.1:}; pg_port=${pg_port%%/*}
if PGPASSWORD= PGPASSFILE=/nonexistent psql -w "postgres://trawler@127.0.0.1:$pg_port/trawler?sslmode=disable" -tAc 'SELECT 1' >/dev/null 2>&1; then
  fail "postgres let a local connection in without the password"
fi
if PGPASSWORD= PGPASSFILE=/nonexistent psql -w "postgres://trawler:wrong@127.0.0.1:$pg_port/trawler?sslmode=disable" -tAc 'SELECT 1' >/dev/null 2>&1; then
  fail "postgres let a local connection in with a wrong password"
fi
[[ "$(psql_q 'SELECT 1')" == 1 ]] || fail "postgres refused the password env printed"
echo "stack_test: ok: postgres refuses a connection without the password"

marker="stack-test-$$-$(date +%s)"
psql_q "CREATE TABLE IF NOT EXISTS stack_test_marker (v text)" >/dev/null
psql_q "INSERT INTO stack_test_marker VALUES ('$marker')" >/dev/null
tctl() { .tools/bin/temporal "$@" --address "$TEMPORAL_ADDRESS"; }
tctl workflow start --task-queue stack-test --type StackTestMarker --workflow-id "$marker" >/dev/null

scripts/stack.sh down
for pid in $after; do
  if running "$pid"; then fail "process $pid still runs after down"; fi
done
for port in 7233 8233 9000 55432; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then fail "port $port still open after down"; fi
done
echo "stack_test: ok: 'down' left no process and no open port"

scripts/stack.sh up
[[ "$(psql_q "SELECT count(*) FROM stack_test_marker WHERE v = '$marker'")" == 1 ]] || fail "postgres lost data across down/up"
psql_q "DROP TABLE stack_test_marker" >/dev/null
tctl workflow describe --workflow-id "$marker" >/dev/null || fail "temporal lost workflow $marker across down/up"
tctl workflow terminate --workflow-id "$marker" --reason "stack test done" >/dev/null
echo "stack_test: ok: data survived down/up"
echo "stack_test: 4 passed, 0 failed"
