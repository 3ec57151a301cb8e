#!/usr/bin/env bash
# ACKLEVEL benchmark (issue #15): XADD latency at both ack levels on a
# 3-node streamd cluster on loopback (one shard, load on the leader), in the
# same run: stream "q" is QUORUM (the default: the reply comes once a
# majority holds the entry durably and it is applied), stream "l" is
# XCFGSET l ACKLEVEL LEADER (the reply comes once the entry is durable in
# the leader's own log). Not a test: it prints figures, it asserts nothing.
#
#   bench/acklevel.sh [rounds]
#
# Each round runs, alternating which level goes first:
#   redis-benchmark -c 10 -P 1 -n 20000 --precision 3 XADD <stream> '*' f v
# and prints p50/p99 (ms) per level, then the medians and their ratios, and
# from the leader's /metrics how many XADDs each level answered (a LEADER
# XADD waits for the quorum when another write to its stream is in flight
# or the leader's term is new).
#
# Needs redis-server, redis-cli, redis-benchmark and curl on PATH; builds
# ./cmd/streamd. Ports come from 17960-17979.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
LAT_REQUESTS=20000
LAT_CLIENTS=10

PORT_FIRST=17960
PORT_LAST=17979
. bench/lib.sh

go build -o "$TMP/streamd" ./cmd/streamd

# start_streamd DIR PORT [args...]: with metrics on a free port, kept in
# METRICS[PORT].
declare -a METRICS
start_streamd() {
	local dir=$1 cport=$2
	shift 2
	free_port
	METRICS[cport]=$port
	"$TMP/streamd" --port "$cport" --dir "$dir" --metrics-addr "127.0.0.1:$port" "$@" ${STREAMD_ARGS:-} 2>>"$dir.log" &
	pids+=("$!")
}

# latency PORT STREAM: "p50 p99" (ms) of XADD STREAM at -c LAT_CLIENTS -P 1.
latency() {
	redis-benchmark -p "$1" -c "$LAT_CLIENTS" -n "$LAT_REQUESTS" -P 1 --precision 3 XADD "$2" '*' f v 2>&1 | tr '\r' '\n' |
		awk '/latency summary/ { getline; getline; print $3, $5 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# The cluster: n1 bootstraps, n2 and n3 join through n1's client port.
start_cluster "$TMP"
LP=$LEADER
LM=${METRICS[LEADER]}

redis-cli -p "$LP" XADD q '*' f v >/dev/null
redis-cli -p "$LP" XADD l '*' f v >/dev/null
redis-cli -p "$LP" XCFGSET l ACKLEVEL LEADER >/dev/null
echo "== XADD latency by ack level: 3 streamd nodes on loopback, 1 shard, load on the leader (port $LP)"
echo "   redis-benchmark -c $LAT_CLIENTS -P 1 -n $LAT_REQUESTS --precision 3 XADD <stream> '*' f v (ms)"
printf "%-7s %10s %10s %10s %10s\n" round quorum-p50 quorum-p99 leader-p50 leader-p99
: >"$TMP/q50"
: >"$TMP/q99"
: >"$TMP/l50"
: >"$TMP/l99"
for round in $(seq "$ROUNDS"); do
	if ((round % 2)); then
		read -r q50 q99 < <(latency "$LP" q)
		read -r l50 l99 < <(latency "$LP" l)
	else
		read -r l50 l99 < <(latency "$LP" l)
		read -r q50 q99 < <(latency "$LP" q)
	fi
	echo "$q50" >>"$TMP/q50"
	echo "$q99" >>"$TMP/q99"
	echo "$l50" >>"$TMP/l50"
	echo "$l99" >>"$TMP/l99"
	printf "%-7s %10s %10s %10s %10s\n" "$round" "$q50" "$q99" "$l50" "$l99"
done
q50=$(median <"$TMP/q50")
q99=$(median <"$TMP/q99")
l50=$(median <"$TMP/l50")
l99=$(median <"$TMP/l99")
printf "%-7s %10s %10s %10s %10s\n" median "$q50" "$q99" "$l50" "$l99"
echo "leader/quorum: p50 $(ratio "$l50" "$q50"), p99 $(ratio "$l99" "$q99")"
echo
echo "answered per level (leader's streamd_xadd_ack_duration_seconds_count):"
curl -s "http://127.0.0.1:$LM/metrics" | grep '^streamd_xadd_ack_duration_seconds_count' || true
for i in 1 2 3; do
	echo "n$i XLEN q: $(redis-cli -p "${CLUSTER_PORTS[i]}" XLEN q), XLEN l: $(redis-cli -p "${CLUSTER_PORTS[i]}" XLEN l)"
done
