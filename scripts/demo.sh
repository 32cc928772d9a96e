#!/usr/bin/env bash
# make demo: the stack is up (make up); start a worker serving every role, prove the whole path
# with a health-check workflow, and say where to look.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p .dev/log
bin/trawler-worker >.dev/log/demo-worker.log 2>&1 &
worker=$!
trap 'kill -TERM $worker 2>/dev/null; wait $worker 2>/dev/null || true' EXIT
bin/trawler check
echo
echo "Temporal UI: http://127.0.0.1:8233   (worker log: .dev/log/demo-worker.log)"
