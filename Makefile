# Trawler: `make demo` to see it crawl, `make test` to check everything it promises.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
# The stack's addresses (TEMPORAL_ADDRESS, DATABASE_URL, TRAWLER_S3_*), unless already set.
WITH_ENV = eval "$$(scripts/stack.sh env)" &&
GO_TEST_FLAGS ?= -count=1 -timeout 45m

.PHONY: all build up down status logs migrate demo test test-unit fmt-check vet bench bench-hour bench-requisites bench-deliveries bench-scale bench-extract fuzz chaos \
	cluster-up cluster-down cluster-status cluster-chaos bench-cluster bench-start clean

all: build

build:
	$(GO) build -o bin/trawler ./starter
	$(GO) build -o bin/trawler-worker ./workers
	$(GO) build -o bin/testweb ./testweb

## The local stack: Temporal dev server, PostgreSQL, MinIO (natively, state in .dev/).
up:
	scripts/stack.sh up
down:
	scripts/stack.sh down
status:
	scripts/stack.sh status
logs:
	scripts/stack.sh logs

migrate: build up
	$(WITH_ENV) bin/trawler migrate

demo: build up
	$(WITH_ENV) scripts/demo.sh

## Everything, against the real stack (started here if it is not up).
test: fmt-check vet up
	$(WITH_ENV) $(GO) test $(GO_TEST_FLAGS) ./...
	$(MAKE) fuzz FUZZTIME=20000x
	scripts/stack_test.sh

## Fuzz targets, FUZZTIME each: a duration (10m) or an execution count (20000x). make test runs
## a count: Go 1.26's coordinator can fail a duration run at its deadline with no crasher
## (golang/go#75804), and a duration needs a -timeout above it (FUZZ_TIMEOUT).
FUZZTIME ?= 30s
FUZZ_TIMEOUT ?= 30m
FUZZ = $(GO) test -run '^$$' -fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT) -fuzz
fuzz:
	$(FUZZ) '^FuzzNormalizeIsIdempotent$$' ./internal/urlnorm/
	$(FUZZ) '^FuzzParse$$' ./internal/parse/
	$(FUZZ) '^FuzzRobots$$' ./internal/robots/
	$(FUZZ) '^FuzzParse$$' ./internal/sitemap/
	$(FUZZ) '^FuzzFingerprint$$' ./internal/dedup/
	$(FUZZ) '^FuzzResolve$$' ./internal/urlnorm/
	$(FUZZ) '^FuzzParseConnectTo$$' ./internal/config/
	$(FUZZ) '^FuzzResponseRecord$$' ./internal/warc/
	$(FUZZ) '^FuzzGuard$$' ./internal/api/

## Crawl benchmark against the real stack (issues #9, #16), in the throughput issue's shape by
## default: the long-tailed test web (10,000 hosts, every 10th seeded) for 10 minutes, one
## workflow+process worker and one fetch worker, the fetch worker SIGKILLed halfway and
## replaced, then the Colly peer (bench/colly) on the same web for as long. The table (pages/s
## in discovery and steady state, events, CPU per component, RSS, S3 requests and Postgres
## round trips per page, politeness violations) is appended to BENCHMARKS.md. Every BENCH_*
## below can be set from the environment, e.g. the older shape: BENCH_LONG_TAIL=0
## BENCH_HOSTS=2000 BENCH_PAGES=50 BENCH_BUDGET_S=60 BENCH_FETCHERS=1,2,4 BENCH_KILL=0
## BENCH_TEMPORAL_PG=1 BENCH_NO_DELAY=1. BENCH_MICRO=1 adds the component benchmarks (test web
## audit, near-dup detection, document saves, the export's memory at 5,000 and 50,000 pages).
BENCH_LONG_TAIL ?= 1
BENCH_HOSTS ?= 10000
BENCH_SEED_EVERY ?= 10
BENCH_BUDGET_S ?= 600
BENCH_FETCHERS ?= 1
BENCH_KILL ?= 1
BENCH_COLLY ?= 1
BENCH_TEMPORAL_PG ?= 0
BENCH_NO_DELAY ?= 0
BENCH_MICRO ?=
bench: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md BENCH_LONG_TAIL=$(BENCH_LONG_TAIL) BENCH_HOSTS=$(BENCH_HOSTS) \
		BENCH_SEED_EVERY=$(BENCH_SEED_EVERY) BENCH_BUDGET_S=$(BENCH_BUDGET_S) BENCH_FETCHERS=$(BENCH_FETCHERS) \
		BENCH_KILL=$(BENCH_KILL) BENCH_COLLY=$(BENCH_COLLY) BENCH_TEMPORAL_PG=$(BENCH_TEMPORAL_PG) BENCH_NO_DELAY=$(BENCH_NO_DELAY) \
		$(GO) test -run '^$$' -bench Crawl -benchtime 1x -v -timeout 90m ./internal/e2e/
	$(MAKE) bench-start
	$(MAKE) bench-requisites
	$(MAKE) bench-deliveries
	if [ -n "$(BENCH_MICRO)" ]; then \
		$(GO) test -run '^$$' -bench . -benchmem ./internal/testweb/ && \
		$(GO) test -run 'NearDuplicates' -v -bench . -benchtime 2000x ./internal/dedup/ | grep -E 'precision|Benchmark|^ok' && \
		$(WITH_ENV) $(GO) test -run '^$$' -bench NearDuplicateSave10k -benchtime 300x -timeout 20m ./internal/store/ && \
		$(WITH_ENV) $(GO) test -run '^$$' -bench ExportMemory -benchtime 1x -timeout 20m ./internal/export/; fi

## A long run (issue 49): does a crawl keep its pace as its database grows and Temporal deletes
## the runs past their retention? 2,000 hosts × 2,000 pages, every host seeded, for 65 minutes,
## on a Temporal server on PostgreSQL started afresh (the dev server's SQLite log outgrows an hour
## at this rate: BENCHMARKS.md, 2026-11-28) with the namespace's retention at 1 hour and its
## retention timers unspread (a 1-minute jitter, not 30); the dev server is back after, even if
## the bench was cut off.
## Each 10-minute window's rate and CPU a page, against the first's, print as the window closes
## (and go to .dev/bench-profiles/*-windows.md), and the whole table to BENCHMARKS.md at the end.
## BENCH_HOUR_* change the shape.
BENCH_HOUR_HOSTS ?= 2000
BENCH_HOUR_PAGES ?= 2000
BENCH_HOUR_BUDGET_S ?= 3900
bench-hour: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md BENCH_LONG_TAIL=0 BENCH_HOSTS=$(BENCH_HOUR_HOSTS) BENCH_PAGES=$(BENCH_HOUR_PAGES) \
		BENCH_SEED_EVERY=1 BENCH_BUDGET_S=$(BENCH_HOUR_BUDGET_S) BENCH_RETENTION=1h BENCH_TEMPORAL=postgres BENCH_FETCHERS=1 \
		BENCH_KILL=0 BENCH_COLLY=0 BENCH_TEMPORAL_PG=0 BENCH_NO_DELAY=0 \
		$(GO) test -run '^$$' -bench Crawl -benchtime 1x -v -timeout 150m ./internal/e2e/; \
		status=$$?; scripts/stack.sh restart temporal; exit $$status

## The start of a crawl (issue 36): 1,000 hosts, all seeded, for a minute; the time to the first
## 1,000 pages and to 80% of the steady rate go to BENCHMARKS.md. BENCH_START_HOSTS,
## BENCH_START_PAGES, BENCH_START_BUDGET_S and BENCH_DELAY_MS change the web.
bench-start: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md $(GO) test -run '^$$' -bench '^BenchmarkStart$$' -benchtime 1x -v -timeout 20m ./internal/e2e/

## What page requisites cost a page (issue 48): a crawl of Python's HTML manual on loopback with
## requisites off, then on; requests, bytes and CPU per page, appended to BENCHMARKS.md.
bench-requisites: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md $(GO) test -run '^$$' -bench '^BenchmarkRequisites$$' -benchtime 1x -v -timeout 40m ./internal/e2e/

## What extraction rules and deliveries (a webhook, a Parquet dataset) cost a page (issue 50):
## the Python manual without rules, with rules, with rules and both outputs.
bench-deliveries: up
	$(WITH_ENV) $(GO) test -run '^$$' -bench '^BenchmarkRun$$' -benchtime 300x ./internal/extract/ | grep -E '^Benchmark'
	$(WITH_ENV) $(GO) test -run '^$$' -bench 'Record$$' -benchtime 5000x ./internal/deliver/ | grep -E '^Benchmark'
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md $(GO) test -run '^$$' -bench '^BenchmarkDeliveries$$' -benchtime 1x -v -timeout 40m ./internal/e2e/

## Main-text extraction (issue 17): Trawler's extractor and go-trafilatura against the PostgreSQL
## and Python manuals Debian ships (apt-get install postgresql-doc-15 python3.11-doc), scored by
## word precision and recall against each site's own content markup. A module of its own
## (bench/extract), so go-trafilatura's dependencies stay out of Trawler's.
bench-extract:
	cd bench/extract && $(GO) run .

## Scaling run (issue #18): a Temporal server on PostgreSQL, and the long-tailed web crawled
## for BENCH_SCALE_BUDGET_S by each layout of BENCH_LAYOUTS in turn: "all" is one worker process
## with every role, "1+3+2" one workflow, three fetch and two process workers, the last worker
## of each role SIGKILLed once and replaced. The table is appended to BENCHMARKS.md.
BENCH_LAYOUTS ?= all,1+3+2
BENCH_SCALE_BUDGET_S ?= 240
bench-scale: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md BENCH_LONG_TAIL=$(BENCH_LONG_TAIL) BENCH_HOSTS=$(BENCH_HOSTS) \
		BENCH_SEED_EVERY=$(BENCH_SEED_EVERY) BENCH_BUDGET_S=$(BENCH_SCALE_BUDGET_S) BENCH_LAYOUTS=$(BENCH_LAYOUTS) \
		$(GO) test -run '^$$' -bench Scaling -benchtime 1x -v -timeout 90m ./internal/e2e/

## The cluster layout against the single-node stack (issue 37): the long-tailed web crawled for
## BENCH_CLUSTER_BUDGET_S by the same four worker processes on `make up`'s stack, then (that
## stack down) on a fresh scripts/cluster.sh cluster; the ratio and each node's CPU a page go
## to BENCHMARKS.md.
BENCH_CLUSTER_BUDGET_S ?= 180
BENCH_CLUSTER = BENCH_REPORT=$(CURDIR)/BENCHMARKS.md BENCH_LONG_TAIL=$(BENCH_LONG_TAIL) BENCH_HOSTS=$(BENCH_HOSTS) \
	BENCH_SEED_EVERY=$(BENCH_SEED_EVERY) BENCH_BUDGET_S=$(BENCH_CLUSTER_BUDGET_S) \
	$(GO) test -tags cluster -run '^$$' -bench ClusterLayout -benchtime 1x -v -timeout 60m ./internal/e2e/
bench-cluster: build
	scripts/cluster.sh down
	scripts/stack.sh up
	$(WITH_ENV) BENCH_CLUSTER_SIDE=single $(BENCH_CLUSTER)
	scripts/stack.sh down
	scripts/cluster.sh down --purge
	TRAWLER_CLUSTER_WORKERS=0 scripts/cluster.sh up
	eval "$$(scripts/cluster.sh env)" && BENCH_CLUSTER_SIDE=cluster $(BENCH_CLUSTER)
	scripts/cluster.sh down

## Fault injection (issue #10): a ~5,000-page crawl while workers are SIGKILLed every 20-30 s,
## Temporal and Postgres restart and MinIO is down for 60 s; then cluster-chaos. CHAOS_RUNS=3
## runs each three times.
CHAOS_RUNS ?= 1
CHAOS_LOG = grep -E '^(=== RUN|--- |ok|FAIL|PASS)|chaos_|faults injected|recovery|SIGKILL|restart|MinIO|Temporal|Postgres|chaos report|ended after'
chaos: up
	$(WITH_ENV) $(GO) test -tags chaos -run 'TestChaos' -count=$(CHAOS_RUNS) -timeout 120m -v ./internal/e2e/ 2>&1 | \
		$(CHAOS_LOG) ; exit $${PIPESTATUS[0]}
	$(MAKE) cluster-chaos CLUSTER_CHAOS_RUNS=$(CHAOS_RUNS)

## A cluster on loopback (issue 37): 3 Temporal nodes on PostgreSQL, 4 MinIO nodes, a Postgres
## primary and standby, a worker process per role; scripts/cluster.sh (README "Running at scale").
cluster-up: build
	scripts/cluster.sh up
	@echo 'eval "$$(scripts/cluster.sh env)"   # the cluster'"'"'s addresses for your shell'
cluster-down:
	scripts/cluster.sh down
cluster-status:
	scripts/cluster.sh status

## The cluster under faults: each run starts a fresh cluster (no workers of its own; the test
## starts them), crawls 10,000 pages while a Temporal node, a MinIO node, a worker of each role
## and the Postgres primary fail, and prints the time to recover from each. The stack of
## `make up` is stopped first: the box has two cores. CLUSTER_CHAOS_RUNS=3 runs it three times.
CLUSTER_CHAOS_RUNS ?= 1
cluster-chaos: build
	scripts/stack.sh down
	for i in $$(seq 1 $(CLUSTER_CHAOS_RUNS)); do \
		echo "cluster-chaos: run $$i of $(CLUSTER_CHAOS_RUNS)"; set +e; \
		scripts/cluster.sh down --purge && TRAWLER_CLUSTER_WORKERS=0 scripts/cluster.sh up && \
		eval "$$(scripts/cluster.sh env)" && $(GO) test -tags cluster -run '^TestClusterChaos$$' -count=1 -timeout 30m -v ./internal/e2e/ 2>&1 | \
			$(CHAOS_LOG) ; rc=$${PIPESTATUS[0]}; set -e; \
		if [ $$rc != 0 ]; then echo "cluster-chaos: run $$i failed; the cluster is left up for a look (logs in .dev/cluster/log)"; exit $$rc; fi; \
	done
	scripts/cluster.sh down

## Only the tests that need no services.
test-unit:
	$(GO) test -count=1 ./internal/config/...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
