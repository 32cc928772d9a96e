# Trawler: `make demo` to see it crawl, `make test` to check everything it promises.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
# The stack's addresses (TEMPORAL_ADDRESS, DATABASE_URL, TRAWLER_S3_*), unless already set.
WITH_ENV = eval "$$(scripts/stack.sh env)" &&
GO_TEST_FLAGS ?= -count=1 -timeout 30m

.PHONY: all build up down status logs migrate demo test test-unit fmt-check vet bench fuzz chaos clean

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

## Crawl benchmark against the real stack (issue #9): Trawler (1, 2 and 4 fetch worker
## processes) and the Colly peer (bench/colly) on the same test web, politeness-bound and with
## no delay; the report table is appended to BENCHMARKS.md. Size with BENCH_HOSTS, BENCH_PAGES,
## BENCH_DELAY_MS, BENCH_BUDGET_S (per run), BENCH_FETCHERS. BENCH_MICRO=1 adds the
## component benchmarks (test web audit, near-dup detection, document saves).
BENCH_MICRO ?=
bench: up
	$(WITH_ENV) BENCH_REPORT=$(CURDIR)/BENCHMARKS.md $(GO) test -run '^$$' -bench Crawl -benchtime 1x -v -timeout 30m ./internal/e2e/
	if [ -n "$(BENCH_MICRO)" ]; then \
		$(GO) test -run '^$$' -bench . -benchmem ./internal/testweb/ && \
		$(GO) test -run 'NearDuplicates' -v -bench . -benchtime 2000x ./internal/dedup/ | grep -E 'precision|Benchmark|^ok' && \
		$(WITH_ENV) $(GO) test -run '^$$' -bench NearDuplicateSave10k -benchtime 300x -timeout 20m ./internal/store/; fi

## Fault injection (issue #10): a ~5,000-page crawl while workers are SIGKILLed every 20-30 s,
## Temporal and Postgres restart and MinIO is down for 60 s. CHAOS_RUNS=3 runs it three times.
CHAOS_RUNS ?= 1
chaos: up
	$(WITH_ENV) $(GO) test -tags chaos -run 'TestChaos' -count=$(CHAOS_RUNS) -timeout 120m -v ./internal/e2e/ 2>&1 | \
		grep -E '^(=== RUN|--- |ok|FAIL|PASS)|chaos_test|faults injected|SIGKILL|restart|MinIO|chaos report' ; exit $${PIPESTATUS[0]}

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
