# Helpers shared by the bench scripts (sourced, not run). Before sourcing,
# set PORT_FIRST and PORT_LAST (the port range the script may use).
# Provides: TMP (a temp dir), pids (processes to stop), cleanup on exit,
# free_port, wait_ping PORT [tries], and checks for redis-server/-cli/-benchmark.

for tool in redis-server redis-cli redis-benchmark; do
	command -v "$tool" >/dev/null || { echo "$tool not on PATH" >&2; exit 1; }
done

TMP=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# free_port: sets $port to the first port of PORT_FIRST-PORT_LAST nothing
# listens on and that was not handed out before.
used=" "
free_port() {
	local p
	for p in $(seq "$PORT_FIRST" "$PORT_LAST"); do
		[[ $used == *" $p "* ]] && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			used="$used$p "
			port=$p
			return
		fi
	done
	echo "no free port in $PORT_FIRST-$PORT_LAST" >&2
	exit 1
}

# wait_ping PORT [TRIES]: poll PING every 5ms, TRIES times (default 24000,
# two minutes).
wait_ping() {
	local port=$1 tries=${2:-24000} i
	for i in $(seq "$tries"); do
		[[ $(redis-cli -p "$port" PING 2>/dev/null) == PONG ]] && return 0
		sleep 0.005
	done
	echo "port $port never answered PING" >&2
	exit 1
}
