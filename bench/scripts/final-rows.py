#!/usr/bin/python3
"""Stamps when each (session, window) first has a final row on PREFIX + thread-stats, read_committed.
Prints one CSV line per window: session,windowStartNanos,arrivalMillis. Stops after SECONDS.
Needs Debian's python3-confluent-kafka (run with /usr/bin/python3)."""
import sys, time
from confluent_kafka import Consumer

bootstrap, prefix, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "latency-%d" % time.time_ns(), "auto.offset.reset": "earliest",
              "isolation.level": "read_committed", "enable.auto.commit": False})
c.subscribe([prefix + "thread-stats"])
seen = set()
end = time.time() + seconds
while time.time() < end:
    m = c.poll(0.2)
    if m is None or m.error() or m.key() is None:
        continue
    parts = m.key().decode("utf-8").split("/")
    if len(parts) != 3:
        continue  # a whole-session row; a window's row is only ever emitted final
    k = (parts[0], parts[2])
    if k not in seen:
        seen.add(k)
        print("%s,%s,%d" % (parts[0], parts[2], int(time.time() * 1000)), flush=True)
c.close()
