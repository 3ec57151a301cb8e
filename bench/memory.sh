#!/usr/bin/env bash
# Memory benchmark (issue #13): RSS of streamd against a real redis-server
# (no persistence) holding the same data, read from /proc once the load is
# done. Not a test: it prints figures and ratios, it asserts nothing.
#
#   bench/memory.sh [entries]
#
# 1. entries (default 1,000,000) × XADD s * f v (redis-benchmark -c 50 -P 64);
# 2. then XGROUP CREATE s g 0 and XREADGROUP in batches of 10,000 until every
#    entry is pending for one consumer.
# RSS after each step (3 s after the load: streamd gives freed pages back
# once no command ran for 1 s, as jemalloc purges unused pages under
# Redis), for each server, and the ratio streamd/Redis (goal of issue #13:
# at most 1.5 at both steps); each server's own accounting at each step
# (INFO used_memory, MEMORY USAGE s SAMPLES 0) beside its RSS; also the RSS of the idle fresh servers and
# the peak RSS (VmHWM) during the load. streamd runs with appendfsync
# everysec (its log is on disk; its memory is what is measured).
#
# Then, unless MEMORY_SPEED=0, bench/memory_speed.sh: durable XADD and
# group-consume throughput, GC CPU share and restart time, before issue
# #13's work and now, against Redis.
#
# Needs redis-server, redis-cli and redis-benchmark on PATH; builds
# ./cmd/streamd. Ports come from 17900-17919.
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${1:-1000000}
BATCH=10000

PORT_FIRST=17900
PORT_LAST=17919
. bench/lib.sh

go build -o "$TMP/streamd" ./cmd/streamd

rss_kb() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/VmHWM/{print $2}' "/proc/$1/status"; }

free_port
rport=$port
redis-server --port "$rport" --save '' --appendonly no --daemonize no >/dev/null 2>&1 &
rpid=$!
pids+=("$rpid")
free_port
sport=$port
"$TMP/streamd" --port "$sport" --dir "$TMP/data" --metrics-addr "" --appendfsync everysec >"$TMP/streamd.log" 2>&1 &
spid=$!
pids+=("$spid")
wait_ping "$rport"
wait_ping "$sport"

declare -A idle after_add after_pel peak_add peak_pel acct
idle[redis]=$(rss_kb "$rpid")
idle[streamd]=$(rss_kb "$spid")
info_field() { redis-cli -p "$1" INFO memory | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
# account NAME PORT STEP: the server's used_memory and MEMORY USAGE s (kB).
account() {
	acct[$1,$3]="$(($(info_field "$2" used_memory) / 1024)) $(($(redis-cli -p "$2" MEMORY USAGE s SAMPLES 0) / 1024))"
}
for p in "$rport" "$sport"; do
	redis-benchmark -p "$p" -n "$ENTRIES" -c 50 -P 64 -q XADD s '*' f v >/dev/null
done
peak_add[redis]=$(hwm_kb "$rpid")
peak_add[streamd]=$(hwm_kb "$spid")
sleep 3
after_add[redis]=$(rss_kb "$rpid")
after_add[streamd]=$(rss_kb "$spid")
account redis "$rport" add
account streamd "$sport" add
for p in "$rport" "$sport"; do
	redis-cli -p "$p" XGROUP CREATE s g 0 >/dev/null
	for _ in $(seq $(((ENTRIES + BATCH - 1) / BATCH))); do
		redis-cli -p "$p" XREADGROUP GROUP g c COUNT "$BATCH" STREAMS s '>' >/dev/null
	done
done
peak_pel[redis]=$(hwm_kb "$rpid")
peak_pel[streamd]=$(hwm_kb "$spid")
sleep 3
after_pel[redis]=$(rss_kb "$rpid")
after_pel[streamd]=$(rss_kb "$spid")
account redis "$rport" pel
account streamd "$sport" pel

for p in "$rport" "$sport"; do
	echo "port $p: XLEN $(redis-cli -p "$p" XLEN s), pending $(redis-cli -p "$p" XPENDING s g | head -1)"
done
ratio() { echo "scale=2; $1 / $2" | bc; }
printf '%-34s %12s %12s %8s\n' "RSS (kB)" redis streamd ratio
printf '%-34s %12s %12s %8s\n' "idle, fresh" "${idle[redis]}" "${idle[streamd]}" \
	"$(ratio "${idle[streamd]}" "${idle[redis]}")"
printf '%-34s %12s %12s %8s\n' "$ENTRIES x XADD s * f v" "${after_add[redis]}" "${after_add[streamd]}" \
	"$(ratio "${after_add[streamd]}" "${after_add[redis]}")"
printf '%-34s %12s %12s %8s\n' "+ one group, all pending" "${after_pel[redis]}" "${after_pel[streamd]}" \
	"$(ratio "${after_pel[streamd]}" "${after_pel[redis]}")"
printf '%-34s %12s %12s %8s\n' "peak during the XADDs" "${peak_add[redis]}" "${peak_add[streamd]}" \
	"$(ratio "${peak_add[streamd]}" "${peak_add[redis]}")"
printf '%-34s %12s %12s %8s\n' "peak up to all pending" "${peak_pel[redis]}" "${peak_pel[streamd]}" \
	"$(ratio "${peak_pel[streamd]}" "${peak_pel[redis]}")"

printf '\n%-34s %12s %12s %12s\n' "accounting (kB)" RSS used_memory "MEMORY USAGE"
for name in redis streamd; do
	read -r used usage <<<"${acct[$name,add]}"
	printf '%-34s %12s %12s %12s\n' "$name, $ENTRIES x XADD" "${after_add[$name]}" "$used" "$usage"
	read -r used usage <<<"${acct[$name,pel]}"
	printf '%-34s %12s %12s %12s\n' "$name, + all pending" "${after_pel[$name]}" "$used" "$usage"
done

if [[ ${MEMORY_SPEED:-1} != 0 ]]; then
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	echo
	bench/memory_speed.sh
fi
