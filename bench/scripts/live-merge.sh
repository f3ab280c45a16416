#!/usr/bin/env bash
# What the decode stage's merge holds while a trace grows: a 25-minute trace written at 25x into a
# directory that ingest --watch follows, on a broker, decode and aggregate of their own; the decode
# stage's /metrics every 2 s. Loopback ports 19092, 18080, 18081.
# Usage: bench/scripts/live-merge.sh [JAR]   (default: cli/target/swapstream.jar; build it first)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
J="java -jar ${1:-$here/cli/target/swapstream.jar}"
W="$(mktemp -d -t swapstream-live.XXXXXX)"; mkdir -p "$W/watch"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
$J broker --data-dir "$W/broker" --port 19092 > "$W/broker.log" 2>&1 &
sleep 8
$J decode -b 127.0.0.1:19092 --state-dir "$W/state-d" --http 127.0.0.1:18081 > "$W/decode.log" 2>&1 &
$J aggregate -b 127.0.0.1:19092 --state-dir "$W/state-a" --http 127.0.0.1:18080 --window 60s > "$W/aggregate.log" 2>&1 &
sleep 10
$J ingest --watch "$W/watch" -b 127.0.0.1:19092 > "$W/ingest.log" 2>&1 &
sleep 3
$J generate -o "$W/watch/live.etl" --cpus 4 --processes 2 --threads-per-process 2 --switches 1470000 --speed 25 > "$W/gen.log" 2>&1 &
gen=$!
echo "seconds merge_queued_items checkpoint_bytes switches_out switches_out_of_order"
metric() { echo "$1" | awk -v n="$2" '$1 ~ "^"n"[{]" {print $2}'; }
for i in $(seq 1 50); do
  sleep 2
  m=$(curl -s 127.0.0.1:18081/metrics)
  echo "$((i * 2)) $(metric "$m" swapstream_merge_queued_items) $(metric "$m" swapstream_decode_checkpoint_bytes)" \
    "$(metric "$m" swapstream_switches_out_total) $(metric "$m" swapstream_switches_out_of_order_total)"
  kill -0 $gen 2>/dev/null || break
done
