#!/usr/bin/env bash
# Compares streamd with a real redis-server under redis-benchmark and prints
# requests/s for both and their ratio. Speed lives here, never in tests.
#
#   bench/compare.sh [requests] [clients] [pipeline]
#
# Needs redis-server and redis-benchmark on PATH; builds ./cmd/streamd.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
C=${2:-50}
P=${3:-1}
TMP=$(mktemp -d)
REDIS_PORT=$(( 17650 + RANDOM % 20 ))
STREAMD_PORT=$(( 17670 + RANDOM % 20 ))
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

go build -o "$TMP/streamd" ./cmd/streamd
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" >/dev/null &
pids+=($!)
"$TMP/streamd" --port "$STREAMD_PORT" --dir "$TMP/data" 2>"$TMP/streamd.log" &
pids+=($!)
for port in "$REDIS_PORT" "$STREAMD_PORT"; do
	for _ in $(seq 100); do
		redis-cli -p "$port" PING >/dev/null 2>&1 && break
		sleep 0.1
	done
done

# rps PORT ARGS...: the requests/s figure redis-benchmark -q prints last.
rps() {
	local port=$1
	shift
	redis-benchmark -p "$port" -n "$N" -c "$C" -P "$P" -q "$@" 2>&1 | tr '\r' '\n' |
		awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}

printf "%-28s %12s %12s %8s\n" workload redis streamd ratio
run() {
	local name=$1
	shift
	local r s
	r=$(rps "$REDIS_PORT" "$@")
	s=$(rps "$STREAMD_PORT" "$@")
	printf "%-28s %12.0f %12.0f %8.2f\n" "$name" "$r" "$s" "$(awk -v a="$s" -v b="$r" 'BEGIN { print (b > 0 ? a / b : 0) }')"
}
run "PING" -t ping_mbulk
run "XADD * (one stream)" XADD bench '*' f v
run "XADD MAXLEN ~ 1000" XADD benchtrim MAXLEN '~' 1000 '*' f v
run "XRANGE - + COUNT 10" XRANGE bench - + COUNT 10
run "XLEN" XLEN bench
