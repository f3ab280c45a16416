#!/usr/bin/env bash
# The query API under load, as a dashboard would poll it: a broker, decode, and aggregate with
# --window 60s, the FILES and SMALL (default 4) small generated traces ingested as one host each, then
# ApacheBench (no keep-alive) against /api/threads?top=25 once every session has ended.
# Loopback ports 19292, 18280, 18281.
# Usage: [SMALL=N] [JAR=...] bench/scripts/query-load.sh FILE.etl...   (default JAR: cli/target/swapstream.jar)
#   the five-session setup: bench/scripts/query-load.sh p40.etl
#   100,000 whole-session rows: SMALL=0 bench/scripts/query-load.sh churn-4m.etl
#     (churn-4m.etl: swapstream generate --exit-rate 0.2 --switches 4100000 --seed 7)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SMALL="${SMALL:-4}"
J="java -jar ${JAR:-$here/cli/target/swapstream.jar}"
W="$(mktemp -d -t swapstream-query.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
health() { curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$1/health"; }
$J broker --data-dir "$W/broker" --port 19292 > "$W/broker.log" 2>&1 &
sleep 8
$J decode -b 127.0.0.1:19292 --state-dir "$W/state" --http 127.0.0.1:18281 > "$W/decode.log" 2>&1 &
$J aggregate -b 127.0.0.1:19292 --state-dir "$W/state" --http 127.0.0.1:18280 --window 60s > "$W/aggregate.log" 2>&1 &
until [ "$(health 18281)" = 200 ] && [ "$(health 18280)" = 200 ]; do sleep 0.5; done
files=("$@")
for ((i = 1; i <= SMALL; i++)); do
  $J generate -o "$W/small$i.etl" --switches $((100000 * i)) --seed $i > /dev/null 2>&1
  files+=("$W/small$i.etl")
done
for f in "${files[@]}"; do $J ingest -b 127.0.0.1:19292 --host "$(basename "$f" .etl)" "$f" >> "$W/ingest.log" 2>&1; done
until [ "$(curl -s 127.0.0.1:18280/api/sessions | grep -o '"final":true' | wc -l)" = ${#files[@]} ]; do sleep 2; done
rows=$(curl -s '127.0.0.1:18280/api/threads?top=1000000000' | grep -o '"threadId"' | wc -l)
windows=$(curl -s '127.0.0.1:18280/api/threads?top=1000000000&window=all' | grep -o '"threadId"' | wc -l)
echo "${#files[@]} sessions final: $rows whole-session rows, $windows window rows kept"
url='http://127.0.0.1:18280/api/threads?top=25'
ab -q -n 200 -c 1 "$url" > /dev/null # warm
echo "--- one client"; ab -q -n 2000 -c 1 "$url" | grep -E 'Requests per second|Failed|Time per request.*mean\)|^ +50%|^ +99%'
echo "--- 32 clients"; ab -q -n 20000 -c 32 "$url" | grep -E 'Requests per second|Failed|Time per request.*mean\)|^ +50%|^ +99%'
echo "--- 32 clients, window=latest by readyP99Nanos"
ab -q -n 20000 -c 32 "$url&window=latest&by=readyP99Nanos" | grep -E 'Requests per second|Failed|^ +50%|^ +99%'
# the stream threads while 32 clients poll: one more trace through the stages, alone and then under load
$J generate -o "$W/more.etl" --switches 1000000 --seed 99 > /dev/null 2>&1
through() { # HOST: seconds from its ingest to its final rows
  local t0; t0=$(date +%s.%N)
  $J ingest -b 127.0.0.1:19292 --host "$1" "$W/more.etl" >> "$W/ingest.log" 2>&1
  until [ "$(curl -s 127.0.0.1:18280/api/sessions | python3 -c "import json,sys; print(any(s['host']=='$1' and s.get('final') for s in json.load(sys.stdin)))")" = True ]; do
    sleep 0.2
  done
  echo "$(date +%s.%N) - $t0" | bc
}
echo "--- 1,000,000 more switches, no client: $(through quiet) s"
ab -q -t 600 -n 10000000 -c 32 "$url" > "$W/ab-during.txt" 2>&1 &
abpid=$!
sleep 2
echo "--- 1,000,000 more switches, 32 clients polling: $(through busy) s"
kill -INT $abpid; wait $abpid 2>/dev/null
grep -E 'Complete requests|Requests per second|^ +99%' "$W/ab-during.txt"
