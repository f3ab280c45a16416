#!/usr/bin/env bash
# The query API under load, as a dashboard would poll it: a broker, decode, and aggregate with
# --window 60s, five sessions ingested as five hosts (P40 and four small generated traces), then
# ApacheBench (no keep-alive) against /api/threads?top=25 once every session has ended.
# Loopback ports 19292, 18280, 18281.
# Usage: bench/scripts/query-load.sh P40.etl [JAR]   (default JAR: cli/target/swapstream.jar)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
P40="$1"
J="java -jar ${2:-$here/cli/target/swapstream.jar}"
W="$(mktemp -d -t swapstream-query.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
health() { curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$1/health"; }
$J broker --data-dir "$W/broker" --port 19292 > "$W/broker.log" 2>&1 &
sleep 8
$J decode -b 127.0.0.1:19292 --state-dir "$W/state" --http 127.0.0.1:18281 > "$W/decode.log" 2>&1 &
$J aggregate -b 127.0.0.1:19292 --state-dir "$W/state" --http 127.0.0.1:18280 --window 60s > "$W/aggregate.log" 2>&1 &
until [ "$(health 18281)" = 200 ] && [ "$(health 18280)" = 200 ]; do sleep 0.5; done
for i in 1 2 3 4; do $J generate -o "$W/small$i.etl" --switches $((100000 * i)) --seed $i > /dev/null 2>&1; done
$J ingest -b 127.0.0.1:19292 --host p40 "$P40" > "$W/ingest.log" 2>&1
for i in 1 2 3 4; do $J ingest -b 127.0.0.1:19292 --host "host$i" "$W/small$i.etl" >> "$W/ingest.log" 2>&1; done
until [ "$(curl -s 127.0.0.1:18280/api/sessions | grep -o '"final":true' | wc -l)" = 5 ]; do sleep 2; done
rows=$(curl -s '127.0.0.1:18280/api/threads?top=1000000000' | grep -o '"threadId"' | wc -l)
windows=$(curl -s '127.0.0.1:18280/api/threads?top=1000000000&window=all' | grep -o '"threadId"' | wc -l)
echo "five sessions final: $rows whole-session rows, $windows window rows kept"
url='http://127.0.0.1:18280/api/threads?top=25'
ab -q -n 200 -c 1 "$url" > /dev/null # warm
echo "--- one client"; ab -q -n 2000 -c 1 "$url" | grep -E 'Requests per second|Failed|Time per request.*mean\)|^ +50%|^ +99%'
echo "--- 32 clients"; ab -q -n 20000 -c 32 "$url" | grep -E 'Requests per second|Failed|Time per request.*mean\)|^ +50%|^ +99%'
echo "--- 32 clients, window=latest by readyP99Nanos"
ab -q -n 20000 -c 32 "$url&window=latest&by=readyP99Nanos" | grep -E 'Requests per second|Failed|^ +50%|^ +99%'
