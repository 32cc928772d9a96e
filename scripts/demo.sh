#!/usr/bin/env bash
# make demo: with the stack up (make up) and the binaries built (make build), serve the test
# web, start a worker with every role, crawl a few hundred pages with progress, then print the
# summary, the test web's politeness audit and where to look.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p .dev/log
addr=${DEMO_ADDR:-127.0.0.1:18080}
stamp=$(date +%Y%m%d-%H%M%S)
# Each demo gets its own workflow IDs, so it never signals host workflows of an earlier demo
# (which may still be idling, or were started by an older build).
export TRAWLER_ID_PREFIX="demo-$stamp/"
export TRAWLER_CONNECT_TO="*.test=$addr"
export TRAWLER_LOG_LEVEL=${TRAWLER_LOG_LEVEL:-warn}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
delay=${DEMO_DELAY:-500ms}
bin/testweb --addr "$addr" --hosts "${DEMO_HOSTS:-30}" --pages "${DEMO_PAGES:-12}" --delay "$delay" >.dev/log/demo-testweb.log 2>&1 &
pids+=($!)
bin/trawler-worker >.dev/log/demo-worker.log 2>&1 &
pids+=($!)
testweb_pid=${pids[0]}
for _ in $(seq 1 50); do
  curl -fsS -H 'Host: control.test' "http://$addr/hosts" >/dev/null 2>&1 && break
  sleep 0.1
done
if ! kill -0 "$testweb_pid" 2>/dev/null; then
  echo "demo: the test web did not start (is $addr taken? set DEMO_ADDR):" >&2
  cat .dev/log/demo-testweb.log >&2
  exit 1
fi
# Each demo serves a fresh test web: forget robots.txt cached from an earlier one, so the audit's
# "robots.txt first" check is meaningful. It fails the demo if it cannot (a test runs this very
# statement against the schema: internal/store/demo_test.go).
forget_robots="UPDATE robots SET expires_at = now() WHERE host LIKE '%.test'"
if ! psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -qc "$forget_robots" >/dev/null; then
  echo "demo: could not forget the test web's cached robots.txt (psql failed above)" >&2
  exit 1
fi
name="demo-$stamp"
echo "demo: crawling the test web at $addr as crawl $name (worker log .dev/log/demo-worker.log)"
bin/trawler crawl --name "$name" --scope any --max-pages "${DEMO_MAX_PAGES:-400}" --max-pages-per-host 40 \
  --delay "$delay" --request-timeout 5s --max-attempts 2 --retry-base 2s --wait "http://h0000.test/"
echo
echo "demo: the test web's audit of the crawl (0 violations expected):"
curl -fsS -H 'Host: control.test' "http://$addr/audit" |
  jq '.totals | {requests, hosts, gapViolations, concurrencyViolations, robotsNotFirst, disallowed, repeats, retryAfterViolations, trapRequests}'
curl -fsS -H 'Host: control.test' "http://$addr/audit" >.dev/log/demo-audit.json
echo
mkdir -p .dev/reports
bin/trawler report --crawl "$name" --out .dev/reports >/dev/null
echo "demo: the crawl's report: .dev/reports/$name.html (opens offline); its figures: .dev/reports/$name.json"
echo "demo: export it:  bin/trawler export --crawl $name > $name.jsonl   (or --format csv|parquet)"
echo "demo: package it: bin/trawler warc --crawl $name --wacz $name.wacz"
echo
echo "Temporal UI: http://127.0.0.1:8233/namespaces/default/workflows?query=CrawlID%3D%22$name%22"
