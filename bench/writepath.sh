#!/usr/bin/env bash
# Write-path benchmark (issue #16): XADD throughput of streamd against a real
# redis-server, measured with a method built to resist a noisy 2-core
# machine. Not a test: it prints figures, it asserts nothing.
#
#   bench/writepath.sh            # the full run (minutes)
#   PAIRS=1 SCALE=10 bench/writepath.sh   # a quick look (N divided by 10)
#   MODE=self bench/writepath.sh  # the method's noise: Redis against itself
#
# For each of PAIRS pairs (default 5) and each measurement, a fresh streamd
# (fresh data directory) and a fresh redis-server are started and both
# prepared (PING answers, the cluster has its voters, a short warm-up run
# each); then the measured work — N requests per side, redis-benchmark -c 50
# XADD s '*' f v — is cut into STEPS steps (default 6) run alternately
# streamd, redis, streamd, redis…, each starting only once every process of
# the pair is idle (their CPU time in /proc/PID/stat moved by at most one
# tick in IDLE_MS, default 200 ms). A pair's ratio is the median of its per-step
# ratios (streamd step k / redis step k); the ratio printed is the median
# over the pairs (the requests/s columns: medians over all steps).
#
#   P1  durable, -P 1, N=90k: streamd default (fsync before each reply)
#       vs redis --appendonly yes --appendfsync always          needed ≥ 1.0
#   P2  durable, -P 16, N=900k                                   needed ≥ 1.0
#   P3  streamd --appendfsync everysec vs Redis without
#       persistence, -P 16, N=900k                               needed ≥ 0.8
#   P4  3 streamd nodes on loopback (Quorum), load on the
#       leader, -P 16, N=900k, vs Redis AOF always               needed ≥ 0.6
#   FW  the same cluster: load on a follower vs on the leader,
#       -P 16, N=900k (ratio follower/leader)                    needed ≥ 0.8
#   LAT p50/p99 (ms) of XADD at -c 10 -P 1 (LAT_N=20k per side), P1's
#       servers, alternating as above; medians over the pairs
#
# MODE=self replaces streamd by a second redis-server configured as the
# Redis side (for FW: two Redis with AOF always), so every ratio should be
# 1.00 and its spread (printed) is the method's noise.
#
# MODE=floor replaces streamd by bench/floor, the least a Go server with a
# goroutine per connection does for a durable XADD (parse, one fdatasync
# per group of queued requests, an ID per request; no Raft, no state
# machine): what P1 and P2 can reach on this machine at best with that
# design. P3 runs it too (it always syncs); P4 and FW are skipped.
# FLOOR_ARGS=-loop makes it one epoll event loop instead: Redis's design.
#
# Environment: PAIRS, STEPS (even), SCALE (divides every N), N_P1, N_BIG,
# LAT_N, IDLE_MS, ONLY (space-separated subset of "P1 P2 P3 P4 FW LAT"),
# STREAMD_ARGS (extra flags for every streamd), FLOOR_ARGS (bench/floor's
# flags, MODE=floor). Needs redis-server, redis-cli and redis-benchmark on
# PATH; builds ./cmd/streamd. Ports come from 17920-17959.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-5}
STEPS=${STEPS:-6}
SCALE=${SCALE:-1}
N_P1=$((${N_P1:-90000} / SCALE))
N_BIG=$((${N_BIG:-900000} / SCALE))
LAT_N=$((${LAT_N:-20000} / SCALE))
IDLE_MS=${IDLE_MS:-200}
MODE=${MODE:-streamd}
ONLY=${ONLY:-P1 P2 P3 P4 FW LAT}
CLIENTS=50
((STEPS % 2 == 0)) || { echo "STEPS must be even" >&2; exit 1; }

PORT_FIRST=17920
PORT_LAST=17959
. bench/lib.sh

go build -o "$TMP/streamd" ./cmd/streamd
[[ $MODE == floor ]] && go build -o "$TMP/floor" ./bench/floor
mkdir -p "$TMP/pair"

# ---- processes ----

# procs: the PIDs of the current pair (for the idle check and the stop).
procs=()

# start_redis DIR PORT PERSIST: PERSIST is "always" (AOF, fsync always) or
# "off" (no AOF, no RDB).
start_redis() {
	local dir=$1 port=$2 aof=(--appendonly yes --appendfsync always)
	[[ $3 == off ]] && aof=(--appendonly no)
	mkdir -p "$dir"
	redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" "${aof[@]}" --save '' \
		--daemonize no --logfile "$dir/redis.log" &
	pids+=("$!")
	procs+=("$!")
}

# start_floor DIR PORT: bench/floor (MODE=floor).
start_floor() {
	mkdir -p "$1"
	# shellcheck disable=SC2086
	"$TMP/floor" --port "$2" --dir "$1" ${FLOOR_ARGS:-} 2>>"$1.log" &
	pids+=("$!")
	procs+=("$!")
}

# start_streamd DIR PORT [flags...]
start_streamd() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir"
	"$TMP/streamd" --port "$port" --dir "$dir" --metrics-addr "" "$@" ${STREAMD_ARGS:-} 2>>"$dir.log" &
	pids+=("$!")
	procs+=("$!")
}

# stop_pair: stop every process of the pair and remove its data.
stop_pair() {
	local p
	for p in "${procs[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${procs[@]}"; do wait "$p" 2>/dev/null || true; done
	procs=()
	used=" " # their ports are free again (lib.sh's free_port)
	rm -rf "$TMP/pair"
	mkdir -p "$TMP/pair"
}

# cpu_ticks: the summed user+system CPU ticks of the pair's processes.
cpu_ticks() {
	local p sum=0 stat
	for p in "${procs[@]}"; do
		stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		stat=${stat##*) } # fields after the command name
		read -r -a f <<<"$stat"
		sum=$((sum + f[11] + f[12])) # utime, stime (fields 14, 15)
	done
	echo "$sum"
}

# wait_idle: until the pair's processes used at most one clock tick of CPU
# (10 ms) in IDLE_MS, all together (raft heartbeats keep an idle cluster
# from standing quite still); gives up after 20 s and says so.
wait_idle() {
	local a b i
	for i in $(seq $((20000 / IDLE_MS))); do
		a=$(cpu_ticks)
		sleep "$(awk -v ms="$IDLE_MS" 'BEGIN { print ms / 1000 }')"
		b=$(cpu_ticks)
		((b - a <= 1)) && return 0
	done
	echo "   (the servers never went idle for ${IDLE_MS} ms; measuring anyway)" >&2
}

# ---- measuring ----

# bench PORT N PIPELINE CLIENTS: redis-benchmark's CSV line for XADD:
# "rps p50 p99".
bench() {
	redis-benchmark -p "$1" -c "$4" -n "$2" -P "$3" --csv XADD s '*' f v 2>/dev/null | tr -d '"\r' |
		awk -F, '$1 ~ /^XADD/ { print $2, $5, $7 }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2); else print 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

# steps NAME PORT_A PORT_B N PIPELINE: the alternating steps of one pair
# (A first), N requests per side; appends A's and B's rps to
# $TMP/NAME.a/.b and the pair's ratio (median of per-step ratios) to
# $TMP/NAME.ratio.
steps() {
	local name=$1 pa=$2 pb=$3 n=$4 pipe=$5 k a b per=$(($4 / (STEPS / 2)))
	: >"$TMP/step.ratios"
	for k in $(seq $((STEPS / 2))); do
		wait_idle
		read -r a _ < <(bench "$pa" "$per" "$pipe" "$CLIENTS")
		wait_idle
		read -r b _ < <(bench "$pb" "$per" "$pipe" "$CLIENTS")
		echo "$a" >>"$TMP/$name.a"
		echo "$b" >>"$TMP/$name.b"
		ratio "$a" "$b" >>"$TMP/step.ratios"
		echo >>"$TMP/step.ratios"
		printf "   %-4s pair %d step %d: %10.0f %10.0f  %s\n" "$name" "$pair" "$k" "$a" "$b" "$(ratio "$a" "$b")"
	done
	median <"$TMP/step.ratios" >>"$TMP/$name.ratio"
}

# latency PORT_A PORT_B: alternating -c 10 -P 1 runs, p50/p99 of each side
# appended to $TMP/LAT.{a,b}{50,99}.
latency() {
	local a50 a99 b50 b99
	wait_idle
	read -r _ a50 a99 < <(bench "$1" "$LAT_N" 1 10)
	wait_idle
	read -r _ b50 b99 < <(bench "$2" "$LAT_N" 1 10)
	echo "$a50" >>"$TMP/LAT.a50"
	echo "$a99" >>"$TMP/LAT.a99"
	echo "$b50" >>"$TMP/LAT.b50"
	echo "$b99" >>"$TMP/LAT.b99"
	printf "   LAT  pair %d: p50/p99 ms %s/%s vs %s/%s\n" "$pair" "$a50" "$a99" "$b50" "$b99"
}

# warm PORT: a short run before measuring (connections, allocations).
warm() { bench "$1" $((N_BIG / 20 + 1000)) 16 "$CLIENTS" >/dev/null; }

# side_a DIR PORT PERSIST [streamd flags...]: the measured side — streamd,
# or with MODE=self a Redis configured as the reference side (PERSIST).
side_a() {
	local dir=$1 port=$2 persist=$3
	shift 3
	if [[ $MODE == self ]]; then
		start_redis "$dir" "$port" "$persist"
	elif [[ $MODE == floor ]]; then
		start_floor "$dir" "$port"
	else
		start_streamd "$dir" "$port" "$@"
	fi
}

# single NAME PIPELINE N A_FLAGS REDIS_PERSIST: one pair of a single-node
# measurement (P1–P3); with LAT also the latency steps (P1 only).
single() {
	local name=$1 pipe=$2 n=$3 aflags=$4 persist=$5 pa pb
	free_port
	pa=$port
	free_port
	pb=$port
	# shellcheck disable=SC2086
	side_a "$TMP/pair/a" "$pa" "$persist" $aflags
	start_redis "$TMP/pair/b" "$pb" "$persist"
	up "$pa" "$TMP/pair/a.log"
	up "$pb" "$TMP/pair/b/redis.log"
	warm "$pa"
	warm "$pb"
	steps "$name" "$pa" "$pb" "$n" "$pipe"
	if [[ $name == P1 && " $ONLY " == *" LAT "* ]]; then
		latency "$pa" "$pb"
	fi
	stop_pair
}

# cluster: one pair of P4 and FW.
cluster() {
	local pb
	if [[ $MODE == self ]]; then
		free_port
		LEADER=$port
		start_redis "$TMP/pair/l" "$LEADER" always
		free_port
		FOLLOWER=$port
		start_redis "$TMP/pair/f" "$FOLLOWER" always
		wait_ping "$LEADER"
		wait_ping "$FOLLOWER"
	else
		start_cluster "$TMP/pair"
	fi
	free_port
	pb=$port
	start_redis "$TMP/pair/b" "$pb" always
	wait_ping "$pb"
	warm "$LEADER"
	warm "$FOLLOWER"
	warm "$pb"
	if [[ " $ONLY " == *" P4 "* ]]; then
		steps P4 "$LEADER" "$pb" "$N_BIG" 16
	fi
	if [[ " $ONLY " == *" FW "* ]]; then
		steps FW "$FOLLOWER" "$LEADER" "$N_BIG" 16
	fi
	stop_pair
}

a_name=streamd
[[ $MODE == self ]] && a_name=redis#2
[[ $MODE == floor ]] && a_name=floor
echo "== bench/writepath.sh: $a_name vs redis, $PAIRS pairs x $STEPS alternating steps, -c $CLIENTS XADD s '*' f v"
echo "   N per side: P1 $N_P1, P2-P4/FW $N_BIG; idle check: at most 1 CPU tick in ${IDLE_MS} ms; MODE=$MODE"
for pair in $(seq "$PAIRS"); do
	if [[ " $ONLY " == *" P1 "* || " $ONLY " == *" LAT "* ]]; then single P1 1 "$N_P1" "" always; fi
	if [[ " $ONLY " == *" P2 "* ]]; then single P2 16 "$N_BIG" "" always; fi
	if [[ " $ONLY " == *" P3 "* ]]; then single P3 16 "$N_BIG" "--appendfsync everysec" off; fi
	if [[ $MODE != floor && (" $ONLY " == *" P4 "* || " $ONLY " == *" FW "*) ]]; then cluster; fi
done

# spread FILE: "min..max" of a file of numbers.
spread() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }

echo
printf "%-4s %-58s %11s %11s %7s %7s  %s\n" "" what "$a_name" redis ratio needed "pair ratios"
row() {
	local name=$1 what=$2 needed=$3
	[[ -s $TMP/$name.ratio ]] || return 0
	printf "%-4s %-58s %11.0f %11.0f %7.2f %7s  %s\n" "$name" "$what" "$(median <"$TMP/$name.a")" \
		"$(median <"$TMP/$name.b")" "$(median <"$TMP/$name.ratio")" "$needed" "$(spread "$TMP/$name.ratio")"
}
row P1 "durable -P 1 (default vs AOF always)" 1.0
row P2 "durable -P 16" 1.0
row P3 "everysec vs Redis without persistence, -P 16" 0.8
row P4 "3 nodes, Quorum, on the leader, -P 16, vs AOF always" 0.6
if [[ -s $TMP/FW.ratio ]]; then
	printf "%-4s %-58s %11.0f %11.0f %7.2f %7s  %s\n" FW "via a follower vs via the leader, -P 16 (follower, leader)" \
		"$(median <"$TMP/FW.a")" "$(median <"$TMP/FW.b")" "$(median <"$TMP/FW.ratio")" 0.8 "$(spread "$TMP/FW.ratio")"
fi
if [[ -s $TMP/LAT.a50 ]]; then
	echo
	printf "XADD latency at -c 10 -P 1 (P1's servers), medians over pairs, ms: %s p50 %s p99 %s; redis p50 %s p99 %s\n" \
		"$a_name" "$(median <"$TMP/LAT.a50")" "$(median <"$TMP/LAT.a99")" "$(median <"$TMP/LAT.b50")" "$(median <"$TMP/LAT.b99")"
fi
if [[ $MODE == self ]]; then
	echo
	echo "MODE=self: every ratio is Redis against itself; its distance from 1.00 and the pair spread are the noise."
	for name in P1 P2 P3 P4 FW; do
		[[ -s $TMP/$name.ratio ]] || continue
		printf "%s: median %+.1f%%, pairs within %s\n" "$name" \
			"$(awk -v r="$(median <"$TMP/$name.ratio")" 'BEGIN { print (r - 1) * 100 }')" \
			"$(awk '{ d = ($1 - 1) * 100; if (d < 0) d = -d; if (d > m) m = d } END { printf "±%.1f%%", m }' "$TMP/$name.ratio")"
	done
fi
