#!/usr/bin/env bash
# How many finished files a second one ingest process publishes: 2 x N small traces (generate --switches 20000, as a
# central collector receives them), ingested as two commands of N files each while the decode stage runs, so the
# second finds N sessions on etw.sessions already. Prints the seconds of each command, of one file alone (the JVM's
# start), and files a second without that start. INGEST_ALONE=1 leaves the decode stage out: the ingester's own rate, the
# broker its only neighbour on the machine.
# Usage: bench/scripts/ingest-files.sh [JAR] [N]   (default: cli/target/swapstream.jar, 100); loopback port 19393
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="${1:-$here/cli/target/swapstream.jar}"
n="${2:-100}"
J="java -jar $jar"
W="$(mktemp -d -t swapstream-ingest.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
B=127.0.0.1:19393
$J broker --data-dir "$W/broker" --port 19393 > "$W/broker.log" 2>&1 &
sleep 8
P="ing$$."
common=(-b "$B" --topic-prefix "$P" --partitions 4)
if [ "${INGEST_ALONE:-0}" = 1 ]; then
  # the topics the decode stage would have made
  $J topics --create -b "$B" --topic-prefix "$P" --partitions 4 > "$W/topics.log" 2>&1 || { cat "$W/topics.log"; exit 1; }
else
  $J decode "${common[@]}" --state-dir "$W/state-d" --http 127.0.0.1:0 --application-id "ing$$" > "$W/decode.log" 2>&1 &
fi
mkdir -p "$W/a" "$W/b" "$W/c"
# one trace copied: each file's host (its name) makes it a session of its own
$J generate -o "$W/c/one.etl" --switches 20000 2>/dev/null
for i in $(seq 1 "$n"); do cp "$W/c/one.etl" "$W/a/h$i.etl"; cp "$W/c/one.etl" "$W/b/g$i.etl"; done
sleep 10
# seconds a command took; one that fails stops the measurement, its output shown
t() {
  local s; s=$(date +%s.%N)
  "$@" > "$W/cmd.log" 2>&1 || { echo "failed: $*" >&2; tail -5 "$W/cmd.log" >&2; exit 1; }
  echo "$(date +%s.%N) - $s" | bc
}
one=$(t $J ingest "$W/c/one.etl" "${common[@]}" --host one) || exit 1
first=$(t $J ingest "$W"/a/*.etl "${common[@]}") || exit 1
second=$(t $J ingest "$W"/b/*.etl "${common[@]}") || exit 1
printf "files %d, %.2f MiB each\n" "$n" "$(echo "$(stat -c %s "$W/a/h1.etl") / 1048576" | bc -l)"
printf "one file: %.2f s; first %d: %.2f s; second %d: %.2f s\n" "$one" "$n" "$first" "$n" "$second"
printf "files/s without the JVM's start: first %.1f, second %.1f\n" "$(echo "($n - 1) / ($first - $one)" | bc -l)" \
  "$(echo "($n - 1) / ($second - $one)" | bc -l)"
