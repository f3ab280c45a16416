#!/usr/bin/env bash
# How long a stage killed with SIGKILL takes to answer /health 200 again after its restart.
# A broker, decode, aggregate and ingest --watch, each its own process, on a trace written as it runs;
# each stage in turn killed and started again on its state directory. Loopback ports 19192, 18180, 18181.
# Usage: bench/scripts/restart-time.sh [JAR]   (default: cli/target/swapstream.jar; build it first)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
J="java -jar ${1:-$here/cli/target/swapstream.jar}"
W="$(mktemp -d -t swapstream-restart.XXXXXX)"; mkdir -p "$W/watch"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
health() { curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$1/health"; }
$J broker --data-dir "$W/broker" --port 19192 > "$W/broker.log" 2>&1 &
sleep 8
declare -A port=([decode]=18181 [aggregate]=18180) pid
for st in decode aggregate; do
  $J $st -b 127.0.0.1:19192 --state-dir "$W/state" --http 127.0.0.1:${port[$st]} > "$W/$st.log" 2>&1 &
  pid[$st]=$!
done
until [ "$(health 18181)" = 200 ] && [ "$(health 18180)" = 200 ]; do sleep 0.5; done
$J ingest --watch "$W/watch" -b 127.0.0.1:19192 > "$W/ingest.log" 2>&1 &
$J generate -o "$W/watch/live.etl" --cpus 4 --switches 400000 --speed 4 > "$W/gen.log" 2>&1 &
sleep 12
for st in decode aggregate; do
  kill -9 ${pid[$st]}
  sleep 1
  t0=$(date +%s.%N)
  $J $st -b 127.0.0.1:19192 --state-dir "$W/state" --http 127.0.0.1:${port[$st]} >> "$W/$st.log" 2>&1 &
  pid[$st]=$!
  until [ "$(health ${port[$st]})" = 200 ]; do sleep 0.2; done
  echo "$st: /health 200 $(echo "$(date +%s.%N) - $t0" | bc) s after its restart"
done
