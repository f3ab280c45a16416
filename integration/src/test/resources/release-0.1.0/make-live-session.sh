#!/usr/bin/env bash
# Writes live-session.tar.gz beside this script: what release 0.1.0 itself leaves on its broker and
# in its ingester's positions when a live session is stopped half-way. Run once, with 0.1.0's jar
# (scripts/release-jar.sh 0.1.0); Release010StateIT restores it with the current build. Never run it
# with a later release: the point is the bytes 0.1.0 wrote.
set -euo pipefail
jar=${1:?usage: make-live-session.sh SWAPSTREAM-0.1.0.jar}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$w"' EXIT
s=(java -Xmx384m -jar "$jar")
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# the trace: 68 buffers of 8 KiB, 20,000 switches on 2 processors over about 9 s; the host's file holds its first 36
"${s[@]}" generate -o "$w/whole.etl" --switches 20000 --cpus 2 --processes 3 --threads-per-process 3 --buffer-size 8 \
  --seed 11 --start 2026-11-01T00:00:00Z >&2
mkdir -p "$w/traces"
head -c $((36 * 8192)) "$w/whole.etl" > "$w/traces/release010.etl"

port=$(free)
b=127.0.0.1:$port
kafka=(-b "$b" --topic-prefix r010. --partitions 1)
"${s[@]}" broker --data-dir "$w/broker" --port "$port" > "$w/broker.log" 2>&1 & pids+=($!)
until grep -q "broker: running" "$w/broker.log"; do sleep 1; done
"${s[@]}" decode "${kafka[@]}" --application-id r010 --instance-id decode-1 --state-dir "$w/decode" --http 127.0.0.1:0 \
  > "$w/decode.log" 2>&1 & pids+=($!)
"${s[@]}" aggregate "${kafka[@]}" --application-id r010 --instance-id aggregate-1 --state-dir "$w/aggregate" --http 127.0.0.1:0 \
  --window 2s --emit-interval 1s > "$w/aggregate.log" 2>&1 & pids+=($!)
"${s[@]}" rollup "${kafka[@]}" --application-id r010 --instance-id rollup-1 --state-dir "$w/rollup" --http 127.0.0.1:0 \
  > "$w/rollup.log" 2>&1 & pids+=($!)
for l in decode aggregate rollup; do until grep -q "$l: running" "$w/$l.log"; do sleep 1; done; done
"${s[@]}" ingest --watch "$w/traces" --host-from-file-name --quiet 1h --poll 200ms "${kafka[@]}" > "$w/ingest.log" 2>&1 & pids+=($!)
# the stages take the 36 buffers and what follows from them, then stay with the session open
sleep 45
grep -h "RUNNING" "$w/decode.log" "$w/aggregate.log" | tail -2 >&2
# stopped as a service stop does, the ingester first and the broker last
for i in 4 3 2 1 0; do kill -TERM "${pids[$i]}"; wait "${pids[$i]}" || true; done
pids=()
cp "$w/whole.etl" "$w/broker/"
tar -C "$w/broker" -czf "$here/live-session.tar.gz" .
ls -la "$here/live-session.tar.gz" >&2
