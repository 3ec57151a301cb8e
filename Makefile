# streamd build and test entry points. `make test` is what CI (.ci/run) runs.
GO ?= go

.PHONY: all test build run vet fmt bench

all: vet test

# Every package with the race detector. The differential and tool tests need
# redis-server, redis-cli and redis-benchmark on PATH; without them they skip,
# unless STREAMD_REQUIRE_REDIS=1 (as in CI), where they fail instead.
test:
	$(GO) test -race -count=1 ./...

build:
	$(GO) build -o streamd ./cmd/streamd

run:
	$(GO) run ./cmd/streamd

vet:
	$(GO) vet ./...

# Rewrites files in place; CI-style check: test -z "$$(gofmt -l .)".
fmt:
	gofmt -w .

# Go benchmarks, then streamd against redis-server under redis-benchmark
# (bench/compare.sh prints requests/s and ratios). Tests never assert speed.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@if command -v redis-benchmark >/dev/null 2>&1; then bench/compare.sh; \
	else echo "redis-benchmark not on PATH: skipping bench/compare.sh"; fi
