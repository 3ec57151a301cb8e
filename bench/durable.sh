#!/usr/bin/env bash
# Durability benchmark (issue #3): streamd in its durable default (Raft log in
# raft-wal segments, fsync before every reply; pass STREAMD_ARGS="--log-store
# bolt" for bbolt) against a real redis-server with
# --appendonly yes --appendfsync always, on the same machine. Not a test:
# it prints figures, it asserts nothing.
#
#   bench/durable.sh [rounds] [restart-entries] [restart-pending]
#
# 1. Throughput: redis-benchmark -c 50 -n 200000 XADD s '*' f v at -P 1 and
#    -P 16, against each server, alternating the order each round; prints
#    every round, the medians and the ratio streamd/Redis.
# 2. Restart: each server fresh, loaded with N entries (pipelined
#    redis-benchmark) and a group with K pending entries (XREADGROUP COUNT K),
#    SHUTDOWN, restart, time from exec until PING answers.
#
# Needs redis-server, redis-cli and redis-benchmark on PATH; builds
# ./cmd/streamd. Ports come from 17880-17899.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
ENTRIES=${2:-1000000}
PENDING=${3:-10000}
REQUESTS=200000
CLIENTS=50

PORT_FIRST=17880
PORT_LAST=17899
. bench/lib.sh

now_ms() { date +%s%3N; }

# wait_exit PID: wait for a process this script started to end.
wait_exit() { wait "$1" 2>/dev/null || true; }

go build -o "$TMP/streamd" ./cmd/streamd

# start_redis DIR PORT / start_streamd DIR PORT: start in the background and
# set $started to the PID.
start_redis() {
	mkdir -p "$1"
	redis-server --port "$2" --bind 127.0.0.1 --dir "$1" --appendonly yes --appendfsync always \
		--save '' --daemonize no --logfile "$1/redis.log" &
	started=$!
	pids+=("$started")
}
start_streamd() {
	"$TMP/streamd" --port "$2" --dir "$1" ${STREAMD_ARGS:-} 2>>"$TMP/streamd-$2.log" &
	started=$!
	pids+=("$started")
}

# rps PORT PIPELINE: requests/s of the XADD run.
rps() {
	redis-benchmark -p "$1" -c "$CLIENTS" -n "$REQUESTS" -P "$2" -q XADD s '*' f v 2>&1 | tr '\r' '\n' |
		awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "== throughput: redis-benchmark -c $CLIENTS -n $REQUESTS XADD s '*' f v (redis: appendonly yes, appendfsync always; streamd: default)"
free_port
RP=$port
free_port
SP=$port
start_redis "$TMP/redis-tp" "$RP"
start_streamd "$TMP/streamd-tp" "$SP"
wait_ping "$RP" 120000
wait_ping "$SP" 120000
printf "%-10s %-6s %12s %12s %8s\n" pipeline round redis streamd ratio
for P in 1 16; do
	: >"$TMP/r.$P"
	: >"$TMP/s.$P"
	for round in $(seq "$ROUNDS"); do
		if ((round % 2)); then
			r=$(rps "$RP" "$P")
			s=$(rps "$SP" "$P")
		else
			s=$(rps "$SP" "$P")
			r=$(rps "$RP" "$P")
		fi
		echo "$r" >>"$TMP/r.$P"
		echo "$s" >>"$TMP/s.$P"
		printf "%-10s %-6s %12.0f %12.0f %8s\n" "-P $P" "$round" "$r" "$s" "$(ratio "$s" "$r")"
	done
	r=$(median <"$TMP/r.$P")
	s=$(median <"$TMP/s.$P")
	printf "%-10s %-6s %12.0f %12.0f %8s\n" "-P $P" median "$r" "$s" "$(ratio "$s" "$r")"
done
redis-cli -p "$RP" SHUTDOWN >/dev/null 2>&1 || true
redis-cli -p "$SP" SHUTDOWN >/dev/null 2>&1 || true

# restart NAME START_FN DIR: fresh server, load, pending, SHUTDOWN, restart,
# time until PING answers.
restart() {
	local name=$1 startfn=$2 dir=$3 port pid t0 t1 t2 t3 len pend size len2 pend2
	free_port
	$startfn "$dir" "$port"
	pid=$started
	wait_ping "$port" 120000
	redis-benchmark -p "$port" -c 50 -P 64 -n "$ENTRIES" -q XADD big '*' f v >/dev/null 2>&1
	redis-cli -p "$port" XGROUP CREATE big g 0 >/dev/null
	redis-cli -p "$port" XREADGROUP GROUP g c COUNT "$PENDING" STREAMS big '>' >/dev/null
	len=$(redis-cli -p "$port" XLEN big)
	pend=$(redis-cli -p "$port" XPENDING big g | head -1)
	t0=$(now_ms)
	redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
	wait_exit "$pid"
	t1=$(now_ms)
	size=$(du -sh "$dir" | cut -f1)
	t2=$(now_ms)
	$startfn "$dir" "$port"
	pid=$started
	wait_ping "$port" 120000
	t3=$(now_ms)
	len2=$(redis-cli -p "$port" XLEN big)
	pend2=$(redis-cli -p "$port" XPENDING big g | head -1)
	printf "%-8s entries %s pending %s | SHUTDOWN %6d ms | data %5s | restart to PING %6d ms | after restart: entries %s pending %s\n" \
		"$name" "$len" "$pend" $((t1 - t0)) "$size" $((t3 - t2)) "$len2" "$pend2"
	redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait_exit "$pid"
}

echo
echo "== restart with $ENTRIES entries and $PENDING pending (SHUTDOWN, start, time until PING answers)"
restart redis start_redis "$TMP/redis-rs"
restart streamd start_streamd "$TMP/streamd-rs"
