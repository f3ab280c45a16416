#!/usr/bin/env bash
# An upgrade in place, mid-session, one instance a stage: decode, aggregate, rollup and ingest --watch
# of OLD.jar follow a trace written as it runs; each in turn is stopped with SIGTERM and NEW.jar started
# on the same state directory, instance id and topics. Prints how long each took to answer /health 200
# and compares every final thread row on the topic with `stats` of the finished file.
# Usage: bench/scripts/upgrade-in-place.sh OLD.jar NEW.jar   (OLD: scripts/release-jar.sh 0.1.0)
set -euo pipefail
old=(java -Xmx384m -jar "${1:?usage: upgrade-in-place.sh OLD.jar NEW.jar}")
new=(java -Xmx384m -jar "${2:?usage: upgrade-in-place.sh OLD.jar NEW.jar}")
W=$(mktemp -d -t swapstream-upgrade.XXXXXX); mkdir -p "$W/traces"
declare -A pid
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 2; rm -rf "$W"' EXIT
free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free); b=127.0.0.1:$port
kafka=(-b "$b" --topic-prefix up. --partitions 2)
await() { until grep -qs "$2" "$W/$1.log"; do sleep 0.5; done; }
args() {
  case $1 in
    ingest) echo ingest --watch "$W/traces" --host-from-file-name --quiet 20s --poll 200ms ;;
    *) echo "$1" --application-id up --instance-id "$1-1" --state-dir "$W/$1" --http 127.0.0.1:0 \
         $([ "$1" = aggregate ] && echo --window 60s) ;;
  esac
}
start() { # JAR-ARRAY-NAME STAGE
  local -n jar=$1
  # shellcheck disable=SC2046
  "${jar[@]}" $(args "$2") "${kafka[@]}" >> "$W/$2.log" 2>&1 & pid[$2]=$!
}
"${new[@]}" broker --data-dir "$W/broker" --port "$port" > "$W/broker.log" 2>&1 & pid[broker]=$!
await broker "broker: running"
for st in decode aggregate rollup; do start old "$st"; await "$st" "$st: running"; done
start old ingest; await ingest "watching"
"${old[@]}" generate -o "$W/traces/web01.etl" --cpus 4 --switches 600000 --speed 1 --seed 5 > "$W/generate.log" 2>&1 & gen=$!
sleep 20
for st in decode aggregate rollup ingest; do
  kill -TERM "${pid[$st]}"; wait "${pid[$st]}" || true
  t0=$(date +%s.%N); from=$(wc -c < "$W/$st.log")
  start new "$st"
  if [ "$st" = ingest ]; then
    until tail -c +"$from" "$W/ingest.log" | grep -q "resuming session"; do sleep 0.2; done
    echo "ingest: 0.1.0 stopped, this build resumed the session $(echo "$(date +%s.%N) - $t0" | bc) s later"
  else
    until tail -c +"$from" "$W/$st.log" | grep -q "HTTP on"; do sleep 0.2; done
    http=$(tail -c +"$from" "$W/$st.log" | sed -n 's|.*HTTP on http://\([0-9.:]*\)/.*|\1|p' | head -1)
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "$http/health")" = 200 ]; do sleep 0.2; done
    echo "$st: 0.1.0 stopped, this build answered /health 200 $(echo "$(date +%s.%N) - $t0" | bc) s later"
  fi
  sleep 5
done
wait "$gen"
await ingest "ended after"
"${new[@]}" stats "$W/traces/web01.etl" --window 60s --format jsonl > "$W/windows.jsonl"
"${new[@]}" stats "$W/traces/web01.etl" --format jsonl > "$W/whole.jsonl"
for i in $(seq 1 90); do
  "${new[@]}" tail thread-stats --from-beginning "${kafka[@]}" > "$W/topic.jsonl" 2>/dev/null
  python3 - "$W/windows.jsonl" "$W/whole.jsonl" "$W/topic.jsonl" <<'PY' && exit 0
import json, sys
W = 60_000_000_000
def rows(path, finals_only, windows):
    """Final rows by (session, thread, window): a window's row spans one whole window; the others are whole-session rows."""
    out, twice = {}, 0
    for line in open(path):
        r = json.loads(line)
        if finals_only and not r.get("final"):
            continue
        w = r.get("windowStartNanos")
        if (w is not None and w % W == 0 and r.get("windowEndNanos", 0) - w == W) != windows:
            continue
        k = (r["session"], r["threadId"], w if windows else None)
        twice += k in out
        out[k] = r
    return out, twice
ok = True
for name, offline, windows in (("window", sys.argv[1], True), ("whole-session", sys.argv[2], False)):
    o, _ = rows(offline, False, windows)
    t, twice = rows(sys.argv[3], True, windows)
    if set(o) != set(t):
        sys.exit(1)  # not all final yet
    bad = [k for k in o if o[k] != t[k]]
    print("%s rows: %d offline, %d final on the topic, %d differ, %d final more than once" % (name, len(o), len(t), len(bad), twice))
    ok = ok and not bad and not twice
sys.exit(0 if ok else 2)
PY
  [ $? = 2 ] && exit 2
  sleep 2
done
echo "the topic's final rows never matched the offline ones"; exit 1
