#!/usr/bin/env bash
# Makes testdata/datadir-v1/datadir.tar.gz: a data directory written by the
# release whose snapshots are version 1 (commit ccfcd6c, before snapshot
# version 2), with BOTH a snapshot and log entries after it, so opening it
# exercises a v1 snapshot restore and then log replay. What it holds, and
# the replies it must give, are in expected.txt (checked by
# TestDataDirV1Fixture in cmd/streamd).
#
# Usage: make.sh STREAMD_V1_BINARY   (built with: git checkout ccfcd6c &&
#        go build -o /tmp/streamd-v1 ./cmd/streamd)
set -euo pipefail
bin=${1:?usage: make.sh streamd-v1-binary}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=17990
"$bin" --port $port --dir "$work/data" --snapshot-log-size 0 >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 100); do redis-cli -p $port PING >/dev/null 2>&1 && break; sleep 0.1; done
r() { redis-cli -p $port "$@" >/dev/null; }
rin() { redis-cli -p $port -x "$@" >/dev/null; } # last argument from stdin

big() { head -c "$1" /dev/zero | tr '\0' "$2"; }

# Before the snapshot. Small nodes so that a few entries make several.
r CONFIG SET stream-node-max-entries 10
for i in $(seq 1 35); do r XADD s1 "$i-1" f "v$i" n "$i"; done
r XDEL s1 2-1 3-1 15-1 35-1         # tombstones, one node's last entry
r XADD s1 36-1 other x              # fields unlike the master's
for i in 1 2 3; do big $((i * 3000)) "$(printf "\\x$((60 + i))")" | rin XADD big "$i-0" payload; done
r XGROUP CREATE s1 g1 0
r XGROUP CREATE s1 g2 '$'
r XREADGROUP GROUP g1 alice COUNT 5 STREAMS s1 '>'
r XREADGROUP GROUP g1 bob COUNT 3 STREAMS s1 '>'
r XACK s1 g1 4-1
r XGROUP CREATECONSUMER s1 g2 carol
r XADD ttl 1-1 f v
r PEXPIREAT ttl 4102444800000      # 2100-01-01: a deadline that stays in the future
r ACL SETUSER fixture on '>secret' '~s*' +@read +xadd
redis-cli -p $port -n 1 XADD db1 5-5 in db1 >/dev/null
r SAVE

# After the snapshot: only in the log.
for i in $(seq 37 44); do r XADD s1 "$i-1" f "v$i" n "$i"; done
r XTRIM s1 MAXLEN '~' 30
r XREADGROUP GROUP g1 alice COUNT 2 STREAMS s1 '>'
r XCLAIM s1 g1 carol 0 12-1
r XGROUP SETID s1 g2 40-1
big 5000 Z | rin XADD big 4-0 payload
r XDEL big 2-0
r CONFIG SET stream-node-max-bytes 1000   # logged; v1 ignored it for splitting
r XADD after 1-1 f v
redis-cli -p $port -n 1 XADD db1 6-6 in again >/dev/null
redis-cli -p $port SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$pid" || true
find "$work/data" -type f | sort | sed "s|$work/||" >&2
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$here/datadir.tar.gz" data
ls -l "$here/datadir.tar.gz" >&2
