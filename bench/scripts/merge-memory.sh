#!/usr/bin/env bash
# What the decode stage's merge holds for a session whose processor 1 is parked (logs nothing) for L,
# in file mode (no flush timer): every other processor's items from the park on, until the parked
# processor's buffer comes. For a busy 16- and a 64-processor host (the generator's rate for these
# shapes), L = 1, 5 and 15 minutes; inspect --live decodes each file as a live session would.
# Usage: bench/scripts/merge-memory.sh [JAR]   Needs disk for the traces (a few GB) in $TMPDIR.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
J="java -Xmx12g -jar ${1:-$here/cli/target/swapstream.jar}"
W="$(mktemp -d -t swapstream-merge.XXXXXX)"
trap 'rm -rf "$W"' EXIT
echo "| host | switches/s | parked | peak items | peak MiB | largest checkpoint MiB | out of order |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for shape in "16 16 4" "64 32 4"; do
  set -- $shape
  cpus=$1 procs=$2 threads=$3
  for park in 60 300 900; do
    # a rate probe: 200,000 switches, how long they take
    $J generate -o "$W/probe.etl" --cpus "$cpus" --processes "$procs" --threads-per-process "$threads" --switches 200000 \
      --start 2026-01-01T00:00:00Z --mode cswitch > /dev/null 2>&1
    secs=$($J inspect "$W/probe.etl" --format json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print((d["lastTimestamp"]-d["firstTimestamp"])/1e7)')
    rate=$(/usr/bin/python3 -c "print(int(200000/$secs))")
    n=$(/usr/bin/python3 -c "print(int($rate*($park+40)))")
    $J generate -o "$W/t.etl" --cpus "$cpus" --processes "$procs" --threads-per-process "$threads" --switches "$n" \
      --start 2026-01-01T00:00:00Z --mode cswitch --idle-cpu "1:20:$park" > /dev/null 2>&1
    $J inspect "$W/t.etl" --live --max-lateness 20m --format json | /usr/bin/python3 -c "
import json,sys; d=json.load(sys.stdin)['liveMerge']
print('| %s processors | %d | %d s | %d | %.1f | %.1f | %d |' % ('$cpus', $rate, $park, d['peakItems'], d['peakMiB'], d['peakCheckpointMiB'], d['switchesOutOfOrder']))"
    rm -f "$W/t.etl"
  done
done
