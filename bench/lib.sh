# Helpers shared by the bench scripts (sourced, not run). Before sourcing,
# set PORT_FIRST and PORT_LAST (the port range the script may use).
# Provides: TMP (a temp dir), pids (processes to stop), cleanup on exit,
# free_port, wait_ping PORT [tries], up PORT LOG, wait_cluster PORT,
# start_cluster DIR, and checks for redis-server/-cli/-benchmark.

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

# up PORT LOG: wait_ping, showing the end of LOG if the server never
# answers.
up() {
	(wait_ping "$1") || {
		tail -20 "$2" >&2
		exit 1
	}
}

# wait_cluster PORT: poll CLUSTER INFO until cluster_state:ok (up to 2 minutes).
wait_cluster() {
	local port=$1 i
	for i in $(seq 1200); do
		redis-cli -p "$port" CLUSTER INFO 2>/dev/null | tr -d '\r' | grep -qx 'cluster_state:ok' && return 0
		sleep 0.1
	done
	echo "node on port $port never saw every shard with a leader" >&2
	exit 1
}

# start_cluster DIR: three streamd nodes on loopback, data in DIR/n1..n3
# (n1 bootstraps, n2 and n3 join through n1's client port), each started
# with the calling script's "start_streamd DIR PORT [flags...]", which must
# log to DIR.log. Returns once every node answers, sees a leader, and the
# leader has all three voters; sets CLUSTER_PORTS[1..3] (client ports)
# and LEADER and FOLLOWER (client ports).
start_cluster() {
	local dir=$1 i rp=() role
	CLUSTER_PORTS=()
	for i in 1 2 3; do
		free_port
		CLUSTER_PORTS[i]=$port
		free_port
		rp[i]=$port
	done
	start_streamd "$dir/n1" "${CLUSTER_PORTS[1]}" --node-id n1 --raft-addr "127.0.0.1:${rp[1]}" --bootstrap
	up "${CLUSTER_PORTS[1]}" "$dir/n1.log"
	wait_cluster "${CLUSTER_PORTS[1]}"
	for i in 2 3; do
		start_streamd "$dir/n$i" "${CLUSTER_PORTS[i]}" --node-id "n$i" --raft-addr "127.0.0.1:${rp[i]}" \
			--join "127.0.0.1:${CLUSTER_PORTS[1]}"
	done
	for i in 1 2 3; do
		up "${CLUSTER_PORTS[i]}" "$dir/n$i.log"
		wait_cluster "${CLUSTER_PORTS[i]}"
	done
	# Wait until the leader has both followers as voters.
	for _ in $(seq 600); do
		[[ $(redis-cli -p "${CLUSTER_PORTS[1]}" RAFT SHARDS 2>/dev/null | grep -A1 -x voters | tail -1) == 3 ]] && break
		sleep 0.1
	done
	# The leader: the node whose INFO replication says role:master.
	LEADER= FOLLOWER=
	for _ in $(seq 600); do
		for i in 1 2 3; do
			role=$(redis-cli -p "${CLUSTER_PORTS[i]}" INFO replication 2>/dev/null | tr -d '\r' | grep '^role:' || true)
			if [[ $role == role:master ]]; then
				LEADER=${CLUSTER_PORTS[i]}
			else
				FOLLOWER=${CLUSTER_PORTS[i]}
			fi
		done
		[[ -n $LEADER ]] && break
		sleep 0.1
	done
	[[ -n $LEADER && -n $FOLLOWER ]] || { echo "no leader found" >&2; exit 1; }
}
