#!/usr/bin/env bash
# A cold `run` against a cold `stats` on one trace: each a fresh JVM through the ./swapstream
# wrapper of a checkout (its JIT, GC and class-data flags), `run` on a `swapstream broker` of its
# own (loopback port 19292), a new topic prefix each time. Prints each pair and stats/run.
# Usage: bench/scripts/cold-run.sh FILE.etl [TIMES] [CHECKOUT]   (default 3 times, this checkout)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
trace="$1"; times="${2:-3}"; S="${3:-$here}/swapstream"
W="$(mktemp -d -t swapstream-cold.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
"$S" broker --data-dir "$W/broker" --port 19292 > "$W/broker.log" 2>&1 &
until grep -q "running on" "$W/broker.log" 2>/dev/null; do sleep 0.5; done
sleep 2
"$S" run --demo-switches 20000 -b 127.0.0.1:19292 --topic-prefix warm. > /dev/null 2>&1   # the wrapper's class-data archive, once
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>>"$W/err.log" || echo "failed: $*" >&2; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for i in $(seq 1 "$times"); do
  s=$(secs "$S" stats "$trace")
  r=$(secs "$S" run "$trace" -b 127.0.0.1:19292 --topic-prefix "cold$i$RANDOM.")
  printf 'stats %6.2f s   run %6.2f s   ratio %.2f\n' "$s" "$r" "$(echo "$s / $r" | bc -l)"
done
