#!/usr/bin/env bash
# Speed side of the memory work (issue #13): the memory savings must not
# cost speed. Runs, in one script and on the same machine, a real
# redis-server (--appendonly yes --appendfsync always), streamd built from
# a base commit ("before", default a674ae6, the last commit before issue
# #13's work) and streamd built from the working tree ("after"), both in
# their durable default (fsync before every reply). Not a test: it prints
# figures, it asserts nothing.
#
#   bench/memory_speed.sh [rounds] [base-commit] [restart-entries] [restart-pending]
#
# 1. Durable XADD: redis-benchmark -c 50 -P 16 -n 200000 XADD s '*' f v,
#    `rounds` times (default 3) in rotating order; the medians.
# 2. Group consume: 200,000 entries loaded, XGROUP CREATE, then 10
#    consumers loop XREADGROUP COUNT 100 + XACK of the batch before, in one
#    round trip (bench/consume), until the group is drained: entries/s,
#    `rounds` times, the medians.
# 3. GC CPU share (streamd only) during 1 and 2: the CPU the collector used
#    (GODEBUG=gctrace=1, the "ms cpu" figures of every cycle in the phase:
#    stop-the-world + assist + background + idle marking; "no idle" leaves
#    out the idle-priority marking, which runs only on otherwise idle CPUs)
#    over the process's CPU time (/proc/PID/stat utime + stime) in the same
#    phase.
# 4. Restart: on a fresh data directory, `restart-entries` (default
#    1,000,000) XADDs, XGROUP CREATE, XREADGROUP COUNT `restart-pending`
#    (default 10,000), then kill -9 and start again: time from exec until
#    PING answers and until XLEN answers the full length (polled every 5 ms).
#
# Needs redis-server, redis-cli and redis-benchmark on PATH, and git (the
# base is built from a temporary worktree, removed at exit). Ports come from
# 17940-17959.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
BASE=${2:-a674ae6}
ENTRIES=${3:-1000000}
PENDING=${4:-10000}
REQUESTS=200000
CONSUME_ENTRIES=200000

PORT_FIRST=17940
PORT_LAST=17959
. bench/lib.sh

BASEDIR="$TMP/base-src"
remove_base() { git worktree remove --force "$BASEDIR" 2>/dev/null || true; }
trap 'remove_base; cleanup' EXIT

go build -o "$TMP/streamd-after" ./cmd/streamd
go build -o "$TMP/consume" ./bench/consume
git worktree add --detach -q "$BASEDIR" "$BASE"
(cd "$BASEDIR" && go build -o "$TMP/streamd-before" ./cmd/streamd)
remove_base

now_ms() { date +%s%3N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# gc_ms LOG [noidle]: total GC CPU ms of the gctrace lines in LOG.
gc_ms() {
	awk -v noidle="${2:-}" '/^gc / && match($0, /clock, [0-9.+\/]+ ms cpu/) {
		s = substr($0, RSTART + 7, RLENGTH - 14); n = split(s, a, /[+\/]/)
		for (i = 1; i <= n; i++) if (!(noidle && i == 4)) t += a[i]
	} END { printf "%.1f", t }' "$1"
}

# start KIND DIR PORT: start a server of KIND (redis, before, after) in the
# background; sets $started to its PID. streamd logs (and its gctrace) go
# to DIR.log.
start() {
	mkdir -p "$2"
	case $1 in
	redis)
		redis-server --port "$3" --bind 127.0.0.1 --dir "$2" --appendonly yes --appendfsync always \
			--save '' --daemonize no --logfile "$2/redis.log" &
		;;
	*)
		GODEBUG=gctrace=1 "$TMP/streamd-$1" --port "$3" --dir "$2" --metrics-addr "" 2>>"$2.log" &
		;;
	esac
	started=$!
	pids+=("$started")
}

KINDS=(redis before after)
declare -A PORT PID
for k in "${KINDS[@]}"; do
	free_port
	PORT[$k]=$port
	start "$k" "$TMP/$k-speed" "$port"
	PID[$k]=$started
done
for k in "${KINDS[@]}"; do wait_ping "${PORT[$k]}" 120000; done

# phase KIND CMD...: runs CMD against KIND's server and appends to
# $TMP/gc.KIND.PHASE the GC ms (all, no idle) and CPU ticks it cost.
phase() {
	local k=$1 name=$2 log="$TMP/$1-speed.log" c0 g0 i0 out
	shift 2
	if [[ $k != redis ]]; then c0=$(cpu_ticks "${PID[$k]}"); g0=$(gc_ms "$log"); i0=$(gc_ms "$log" noidle); fi
	out=$("$@")
	if [[ $k != redis ]]; then
		echo "$(awk -v a="$(gc_ms "$log")" -v b="$g0" 'BEGIN{print a-b}') $(awk -v a="$(gc_ms "$log" noidle)" -v b="$i0" 'BEGIN{print a-b}') $(($(cpu_ticks "${PID[$k]}") - c0))" >>"$TMP/gc.$k.$name"
	fi
	echo "$out"
}

xadd_rps() {
	redis-benchmark -p "$1" -c 50 -n "$REQUESTS" -P 16 -q XADD s '*' f v 2>&1 | tr '\r' '\n' |
		awk '/requests per second/ { v = $(NF-5) } END { print v + 0 }'
}
preload() {
	redis-benchmark -p "$1" -c 50 -n "$CONSUME_ENTRIES" -P 64 -q XADD "$2" '*' f v >/dev/null
	redis-cli -p "$1" XGROUP CREATE "$2" g 0 >/dev/null
}
consume_rate() {
	"$TMP/consume" -addr "127.0.0.1:$1" -key "$2" -group g -consumers 10 -count 100 | awk '{ print $(NF-1) }'
}

echo "== speed: redis (appendonly yes, appendfsync always), streamd before ($BASE) and after (working tree), durable defaults"
printf "%-6s %-8s %12s %12s %12s\n" round what redis before after
for round in $(seq "$ROUNDS"); do
	order=("${KINDS[@]:round%3}" "${KINDS[@]:0:round%3}")
	declare -A x c
	for k in "${order[@]}"; do x[$k]=$(phase "$k" xadd xadd_rps "${PORT[$k]}"); done
	for k in "${order[@]}"; do preload "${PORT[$k]}" "c$round"; done
	for k in "${order[@]}"; do c[$k]=$(phase "$k" consume consume_rate "${PORT[$k]}" "c$round"); done
	printf "%-6s %-8s %12s %12s %12s\n" "$round" xadd/s "${x[redis]}" "${x[before]}" "${x[after]}"
	printf "%-6s %-8s %12s %12s %12s\n" "$round" consume/s "${c[redis]}" "${c[before]}" "${c[after]}"
	for k in "${KINDS[@]}"; do
		echo "${x[$k]}" >>"$TMP/xadd.$k"
		echo "${c[$k]}" >>"$TMP/consume.$k"
	done
done
for k in "${KINDS[@]}"; do kill "${PID[$k]}"; wait "${PID[$k]}" 2>/dev/null || true; done

echo
printf "%-40s %12s %12s %12s %13s\n" "median of $ROUNDS" redis before after after/before
for what in xadd consume; do
	r=$(median <"$TMP/$what.redis")
	b=$(median <"$TMP/$what.before")
	a=$(median <"$TMP/$what.after")
	label="durable XADD -c 50 -P 16 (req/s)"
	[[ $what == consume ]] && label="group consume, 10 x COUNT 100 (entries/s)"
	printf "%-40s %12s %12s %12s %13s\n" "$label" "$r" "$b" "$a" "$(ratio "$a" "$b")"
done
# gc_share KIND PHASE COLUMN: GC CPU as a % of process CPU over all rounds
# (column 1: all GC CPU, 2: without idle marking).
gc_share() {
	awk -v col="$3" -v hz="$(getconf CLK_TCK)" '{ g += $col; t += $3 } END {
		if (t > 0) printf "%.1f%%", g / (t * 1000 / hz) * 100; else print "n/a" }' "$TMP/gc.$1.$2"
}
for what in xadd consume; do
	for col in 1 2; do
		label="GC CPU share, $what"
		[[ $col == 2 ]] && label="$label (no idle marking)"
		printf "%-40s %12s %12s %12s\n" "$label" - "$(gc_share before "$what" "$col")" "$(gc_share after "$what" "$col")"
	done
done

echo
echo "== restart: $ENTRIES entries + $PENDING pending, kill -9, start: ms until PING, until XLEN answers"
printf "%-8s %10s %10s %12s %10s\n" server ping_ms xlen_ms xlen pending
for k in "${KINDS[@]}"; do
	free_port
	p=$port
	dir="$TMP/$k-restart"
	start "$k" "$dir" "$p"
	wait_ping "$p" 120000
	redis-benchmark -p "$p" -c 50 -n "$ENTRIES" -P 64 -q XADD big '*' f v >/dev/null
	n=$(redis-cli -p "$p" XLEN big)
	redis-cli -p "$p" XGROUP CREATE big g 0 >/dev/null
	redis-cli -p "$p" XREADGROUP GROUP g c COUNT "$PENDING" STREAMS big '>' >/dev/null
	kill -9 "$started"
	wait "$started" 2>/dev/null || true
	t0=$(now_ms)
	start "$k" "$dir" "$p"
	wait_ping "$p" 120000
	t1=$(now_ms)
	until [[ $(redis-cli -p "$p" XLEN big 2>/dev/null) == "$n" ]]; do sleep 0.005; done
	t2=$(now_ms)
	printf "%-8s %10s %10s %12s %10s\n" "$k" $((t1 - t0)) $((t2 - t0)) "$n" "$(redis-cli -p "$p" XPENDING big g | head -1)"
	kill "$started"
	wait "$started" 2>/dev/null || true
done
