# streamd build and test entry points. `make test` is what CI (.ci/run) runs.
GO ?= go

.PHONY: all test build run vet fmt fuzz bench crash bench-durable bench-writepath certs

all: vet test

# Every package with the race detector. The differential and tool tests need
# redis-server, redis-cli and redis-benchmark on PATH; without them they skip,
# unless STREAMD_REQUIRE_REDIS=1 (as in CI), where they fail instead. Then
# the Dapr pubsub.redis integration tests, a module of their own
# (testdata/dapr) so that Dapr's dependencies stay out of streamd's go.mod.
test:
	$(GO) test -race -count=1 ./...
	cd testdata/dapr && $(GO) test -race -count=1 ./...

# The git commit and whether the tree is modified go into the binary
# (streamd --version, INFO server's redis_git_sha1/streamd_git_sha1), for
# builds where the go command does not stamp them (-buildvcs=false).
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
GIT_DIRTY := $(shell if [ -n "$$(git status --porcelain 2>/dev/null)" ]; then echo true; else echo false; fi)
LDFLAGS := -X streamd/internal/version.commit=$(GIT_COMMIT) -X streamd/internal/version.dirty=$(GIT_DIRTY)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o streamd ./cmd/streamd

run:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/streamd

vet:
	$(GO) vet ./...
	cd testdata/dapr && $(GO) vet ./...

# Rewrites files in place; CI-style check: test -z "$$(gofmt -l .)".
fmt:
	gofmt -w .

# The RESP fuzz targets (server/resp), each for FUZZTIME: the request
# reader, then the reply reader; then RESTORE's payload decoder
# (replication/state). Findings land in each package's testdata/fuzz.
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./server/resp -run '^$$' -fuzz '^FuzzRequestReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./server/resp -run '^$$' -fuzz '^FuzzReplyReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./replication/state -run '^$$' -fuzz '^FuzzRestorePayload$$' -fuzztime $(FUZZTIME)

# Go benchmarks, then streamd against redis-server under redis-benchmark
# (bench/compare.sh prints requests/s and ratios, bench/writepath.sh the
# write-path ratios P1-P4, via a follower, and latency). Tests never assert
# speed.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@if command -v redis-benchmark >/dev/null 2>&1; then bench/compare.sh && bench/writepath.sh; \
	else echo "redis-benchmark not on PATH: skipping bench/compare.sh and bench/writepath.sh"; fi

# The SIGKILL crash test on the real binary with many more cycles than the 20
# of `make test`; the seed is printed (replay: CRASH_SEED=N make crash).
CRASH_CYCLES ?= 200
CRASH_SEED ?= 0
crash:
	$(GO) test -race -count=1 -timeout 60m -run '^TestCrashRecovery$$' -v ./cmd/streamd \
		-args -crash.cycles=$(CRASH_CYCLES) -crash.seed=$(CRASH_SEED)

# Durable streamd against redis-server --appendonly yes --appendfsync always:
# XADD throughput at -P 1 and -P 16, and restart time with 1M entries and
# 10k pending (bench/durable.sh; prints figures, asserts nothing).
bench-durable:
	bench/durable.sh

# The write-path ratios of issue #16 alone (bench/writepath.sh: fresh
# servers per pair, alternating idle-checked steps, medians); PAIRS=1
# SCALE=10 for a quick look, MODE=self for the method's noise.
bench-writepath:
	bench/writepath.sh

# Test certificates for TLS (scripts/gen-certs.sh, as Redis's
# utils/gen-test-certs.sh): a CA, server (127.0.0.1, ::1, localhost), client
# and generic (both roles, for tls-cluster) certificates in ./tls/.
certs:
	scripts/gen-certs.sh tls
