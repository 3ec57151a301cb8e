#!/usr/bin/env bash
# Cluster benchmark (issue #4): a 3-node streamd cluster on loopback (one
# shard, Quorum acknowledgement: a reply after a majority holds the entry
# durably and it is applied), against a single durable streamd and a real
# redis-server --appendonly yes --appendfsync always, in the same run. Not a
# test: it prints figures, it asserts nothing.
#
#   bench/cluster.sh [rounds]
#
# 1. Throughput: redis-benchmark -c 50 -P 16 -n 200000 XADD s '*' f v against
#    the cluster's leader, the single streamd and Redis, rotating the order
#    each round; prints every round, the medians and the ratios.
# 2. Latency at moderate load: redis-benchmark -c 10 -P 1 -n 20000
#    --precision 3 XADD, p50 and p99 (ms) from its latency summary.
#
# Needs redis-server, redis-cli and redis-benchmark on PATH; builds
# ./cmd/streamd. Ports come from 17860-17879.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
REQUESTS=200000
CLIENTS=50
PIPELINE=16
LAT_REQUESTS=20000
LAT_CLIENTS=10

PORT_FIRST=17860
PORT_LAST=17879
. bench/lib.sh

go build -o "$TMP/streamd" ./cmd/streamd

start_redis() {
	mkdir -p "$1"
	redis-server --port "$2" --bind 127.0.0.1 --dir "$1" --appendonly yes --appendfsync always \
		--save '' --daemonize no --logfile "$1/redis.log" &
	pids+=("$!")
}
# start_streamd DIR PORT [args...]
start_streamd() {
	local dir=$1 port=$2
	shift 2
	"$TMP/streamd" --port "$port" --dir "$dir" --metrics-addr "" "$@" ${STREAMD_ARGS:-} 2>>"$dir.log" &
	pids+=("$!")
}

# rps PORT: requests/s of the XADD run at -c CLIENTS -P PIPELINE.
rps() {
	redis-benchmark -p "$1" -c "$CLIENTS" -n "$REQUESTS" -P "$PIPELINE" -q XADD s '*' f v 2>&1 | tr '\r' '\n' |
		awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}

# latency PORT: "p50 p99" (ms) of XADD at -c LAT_CLIENTS -P 1.
latency() {
	redis-benchmark -p "$1" -c "$LAT_CLIENTS" -n "$LAT_REQUESTS" -P 1 --precision 3 XADD lat '*' f v 2>&1 | tr '\r' '\n' |
		awk '/latency summary/ { getline; getline; print $3, $5 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# The cluster: n1 bootstraps, n2 and n3 join through n1's client port.
start_cluster "$TMP"
LP=$LEADER

free_port
SP=$port
start_streamd "$TMP/single" "$SP"
free_port
RDP=$port
start_redis "$TMP/redis" "$RDP"
wait_ping "$SP"
wait_ping "$RDP"

echo "== throughput: redis-benchmark -c $CLIENTS -P $PIPELINE -n $REQUESTS XADD s '*' f v"
echo "   cluster: 3 streamd nodes on loopback, 1 shard, Quorum, load on the leader (port $LP)"
echo "   single: one durable streamd; redis: appendonly yes, appendfsync always"
printf "%-7s %12s %12s %12s %14s %14s\n" round redis single cluster cluster/redis cluster/single
: >"$TMP/r"
: >"$TMP/s"
: >"$TMP/c"
for round in $(seq "$ROUNDS"); do
	case $((round % 3)) in
	1) r=$(rps "$RDP"); s=$(rps "$SP"); c=$(rps "$LP") ;;
	2) c=$(rps "$LP"); r=$(rps "$RDP"); s=$(rps "$SP") ;;
	0) s=$(rps "$SP"); c=$(rps "$LP"); r=$(rps "$RDP") ;;
	esac
	echo "$r" >>"$TMP/r"
	echo "$s" >>"$TMP/s"
	echo "$c" >>"$TMP/c"
	printf "%-7s %12.0f %12.0f %12.0f %14s %14s\n" "$round" "$r" "$s" "$c" "$(ratio "$c" "$r")" "$(ratio "$c" "$s")"
done
r=$(median <"$TMP/r")
s=$(median <"$TMP/s")
c=$(median <"$TMP/c")
printf "%-7s %12.0f %12.0f %12.0f %14s %14s\n" median "$r" "$s" "$c" "$(ratio "$c" "$r")" "$(ratio "$c" "$s")"

echo
echo "== latency: redis-benchmark -c $LAT_CLIENTS -P 1 -n $LAT_REQUESTS --precision 3 XADD (ms)"
printf "%-8s %8s %8s\n" server p50 p99
for name in redis single cluster; do
	case $name in
	redis) p=$RDP ;;
	single) p=$SP ;;
	cluster) p=$LP ;;
	esac
	read -r p50 p99 < <(latency "$p")
	printf "%-8s %8s %8s\n" "$name" "$p50" "$p99"
done

# Every node holds every acknowledged entry once the followers caught up.
for i in 1 2 3; do
	echo "n$i XLEN s: $(redis-cli -p "${CLUSTER_PORTS[i]}" XLEN s)"
done
