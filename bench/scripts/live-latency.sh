#!/usr/bin/env bash
# How long after a window's end its final rows arrive, for each way a logger can write: a trace generated
# as it runs (generate --speed, its trace time 0 at the wall clock it prints), followed by ingest --watch,
# decoded, aggregated in 10 s windows, and a read_committed consumer (final-rows.py) stamping when each
# window's first final row arrived. Processor 1 idles for 30 s from 20 s in, where a mode says so.
# Prints a table: mode, windows, p50/p99/max seconds after the window's end, switches out of order.
# Usage: bench/scripts/live-latency.sh [JAR] [SECONDS]   (default: cli/target/swapstream.jar, 150 s a mode)
# Loopback port 19392; needs Debian's python3-confluent-kafka.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="${1:-$here/cli/target/swapstream.jar}"
secs="${2:-150}"
J="java -jar $jar"
W="$(mktemp -d -t swapstream-latency.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null; sleep 2; rm -rf "$W"' EXIT
B=127.0.0.1:19392
$J broker --data-dir "$W/broker" --port 19392 > "$W/broker.log" 2>&1 &
sleep 8
P="lat$$."
common=(-b "$B" --topic-prefix "$P" --partitions 4)
$J decode "${common[@]}" --state-dir "$W/state-d" --http 127.0.0.1:0 --application-id "lat$$" > "$W/decode.log" 2>&1 &
$J aggregate "${common[@]}" --state-dir "$W/state-a" --http 127.0.0.1:0 --application-id "lat$$" --window 10s > "$W/aggregate.log" 2>&1 &
mkdir -p "$W/declared" "$W/plain"
# files here come from a logger with a 1 s flush timer, and ingest says so; files in plain/ declare nothing
$J ingest --watch "$W/declared" "${common[@]}" --host-from-file-name --flush-timer 1s > "$W/ingest-declared.log" 2>&1 &
$J ingest --watch "$W/plain" "${common[@]}" --host-from-file-name > "$W/ingest-plain.log" 2>&1 &
sleep 15
/usr/bin/python3 "$here/bench/scripts/final-rows.py" "$B" "$P" 100000 > "$W/arrivals.csv" &
rate=1000   # switches a second of this shape (4 processors, 2 processes of 2 threads)
run() { # name folder speed seconds generate-options...
  local name=$1 dir=$2 speed=$3 s=$4; shift 4
  $J generate -o "$W/$dir/$name.etl" --cpus 4 --processes 2 --threads-per-process 2 --switches $((rate * s)) --start now \
    --speed "$speed" "$@" 2> "$W/$name.gen"
  echo "$name $speed $(sed -n 's/.*trace time 0 at .* (\([0-9]*\) ms since 1970).*/\1/p' "$W/$name.gen")" >> "$W/modes"
}
# docs/collecting.md's settings: 16 KiB buffers, a 1 s flush timer (declared), CSwitch events
run cswitch-idle-declared declared 1 "$secs" --mode cswitch --buffer-size 16 --flush-timer 1s --idle-cpu 1:20:30
run cswitch-idle plain 1 "$secs" --mode cswitch --buffer-size 16 --flush-timer 1s --idle-cpu 1:20:30
run compact-busy declared 1 "$secs" --mode compact --buffer-size 16 --flush-timer 1s
run compact-idle declared 1 "$secs" --mode compact --buffer-size 16 --flush-timer 1s --idle-cpu 1:20:30
# the 17-minute file-mode case: 64 KiB buffers, no flush timer, processor 1 parked for 130 s; at 10x, latencies in trace seconds
run file-mode plain 10 1020 --mode cswitch --idle-cpu 1:400:130
sleep 60
$J tail sessions -b "$B" --topic-prefix "$P" --from-beginning > "$W/sessions.jsonl" 2>/dev/null
/usr/bin/python3 - "$W" <<'PY'
import json, sys, statistics, datetime
w = sys.argv[1]
modes = [l.split() for l in open(w + "/modes")]
arrivals = [l.strip().split(",") for l in open(w + "/arrivals.csv") if l.strip()]
ends = {}
for l in open(w + "/sessions.jsonl"):
    r = json.loads(l)
    if r.get("endReason"):
        ends[r["session"]] = r
print("| mode | windows | p50 s | p99 s | max s | switches out of order | session complete |")
print("|---|---:|---:|---:|---:|---:|---|")
for name, speed, t0 in modes:
    speed, t0 = float(speed), int(t0)
    lags = []
    session = None
    # a session's last window closes at its end (the ingester's quiet time after the file stops), not by the merge
    last = max((int(st) for s, st, _ in arrivals if s.startswith(name + ":")), default=None)
    for s, start, at in arrivals:
        if not s.startswith(name + ":") or int(start) == last:
            continue
        session = s
        start_time = int(s.split(":")[-1])  # the session id ends with its StartTime, a FILETIME
        start_nanos = (start_time - 116444736000000000) * 100
        end_wall_ms = t0 + (int(start) + 10_000_000_000 - start_nanos) / 1e6 / speed
        lags.append((int(at) - end_wall_ms) / 1000 * speed)
    lags.sort()
    e = ends.get(session, {})
    if not lags:
        print("| %s | 0 | | | | | |" % name); continue
    p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]
    print("| %s%s | %d | %.1f | %.1f | %.1f | %s | %s |" % (name, " (trace s at %gx)" % speed if speed != 1 else "", len(lags),
          p(0.5), p(0.99), lags[-1], e.get("switchesOutOfOrder", "?"), e.get("complete", "?")))
PY
