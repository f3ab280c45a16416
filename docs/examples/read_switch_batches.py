"""Reads etw.switch-batches and prints one JSON line per context switch.

    python3 read_switch_batches.py [BOOTSTRAP] [--schemas DIR]

Needs python3-confluent-kafka and python3-avro (Debian), and the schemas of
`swapstream schemas --out schemas`. docs/reading-the-topics.md explains each step.
"""
import io
import itertools
import json
import sys

import avro.io
import avro.schema


def load_schemas(directory):
    """Writer schemas by the fingerprint a record's bytes 2-9 carry."""
    schemas = {}
    for line in open(f"{directory}/fingerprints.txt"):
        name, version, fingerprint = line.split()
        path = f"{directory}/{name}.avsc" if version == "current" else f"{directory}/{name}.{version}.avsc"
        schemas[bytes.fromhex(fingerprint)] = avro.schema.parse(open(path).read())
    return schemas


def decode(value, schemas):
    """One Avro single-object record."""
    assert value[:2] == b"\xc3\x01", "not Avro single-object encoding"
    reader = avro.io.DatumReader(schemas[value[2:10]])
    return reader.read(avro.io.BinaryDecoder(io.BytesIO(value[10:])))


def sparse(column, n):
    """A column with nulls: bit i%8 of byte i/8 of present marks row i; values holds those rows' values."""
    out, values = [None] * n, iter(column["values"])
    present = column["present"]
    for i in range(n):
        if present and present[i >> 3] >> (i & 7) & 1:
            out[i] = next(values)
    return out


def apply_exceptions(column, exceptions):
    """A derived column's rows that differ from its rule."""
    for i, v in zip(exceptions["rows"], exceptions["values"]):
        column[i] = v


def columns(b):
    """A ContextSwitchBatch record back to one list per ContextSwitch field."""
    n = b["count"]
    timestamp = list(itertools.accumulate(b["timestampDeltas"]))
    nanos = [b["clockBaseNanos"] + (t - b["clockBaseTimestamp"]) * 10**9 // b["clockTicksPerSecond"] for t in timestamp]
    apply_exceptions(nanos, b["timeNanosExceptions"])
    runs = b["sourceRuns"]
    source = [v for v, k in zip(runs["values"], runs["lengths"]) for _ in range(k)]
    ids = b["threadIds"]
    old = [ids[k] for k in b["oldThreadIdIndexes"]]
    new = [None if k is None else ids[k] for k in sparse(b["newThreadIdIndexes"], n)]
    since, last_out = [None] * n, {}            # the new thread's latest switch-out in this batch
    for i in range(n):
        if new[i] not in (None, 0) and new[i] in last_out:
            since[i] = nanos[i] - last_out[new[i]]
        last_out[old[i]] = nanos[i]
    apply_exceptions(since, b["newThreadTimeSinceLastNanosExceptions"])
    run, last_on_cpu = [None] * n, {}           # the processor's row before
    for i, cpu in enumerate(b["cpu"]):
        if old[i] != 0 and cpu in last_on_cpu:
            run[i] = nanos[i] - last_on_cpu[cpu]
        last_on_cpu[cpu] = nanos[i]
    apply_exceptions(run, b["oldThreadRunNanosExceptions"])
    ready = sparse(b["newThreadReadyNanos"], n)
    waits = [s - r if s is not None and r is not None else None for s, r in zip(since, ready)]
    apply_exceptions(waits, b["newThreadWaitsNanosExceptions"])
    return {
        "cpu": b["cpu"], "timestamp": timestamp, "timeNanos": nanos, "source": source,
        "oldThreadId": old,
        "oldThreadPriority": sparse(b["oldThreadPriority"], n),
        "oldThreadState": sparse(b["oldThreadState"], n),
        "oldThreadWaitReason": sparse(b["oldThreadWaitReason"], n),
        "oldThreadWaitMode": sparse(b["oldThreadWaitMode"], n),
        "newThreadId": new,
        "newThreadPriority": sparse(b["newThreadPriority"], n),
        "newThreadWaitTicks": sparse(b["newThreadWaitTicks"], n),
        "pmcCounters": sparse(b["pmcCounters"], n),
        "newThreadTimeSinceLastNanos": since,
        "oldThreadRunNanos": run,
        "newThreadReadyNanos": ready,
        "newThreadWaitsNanos": waits,
        "readyingThreadId": [None if k is None else ids[k] for k in sparse(b["readyingThreadIdIndexes"], n)],
        "readyingProcessId": sparse(b["readyingProcessId"], n),
        "previousCState": sparse(b["previousCState"], n),
        "oldThreadRank": sparse(b["oldThreadRank"], n),
        "newThreadPriorityDecrement": sparse(b["newThreadPriorityDecrement"], n),
        "oldThreadIdealProcessor": sparse(b["oldThreadIdealProcessor"], n),
        "oldThreadRemainingQuantum": sparse(b["oldThreadRemainingQuantum"], n),
    }


def rows(b):
    """One dict per switch, fields as ContextSwitch has them."""
    c = columns(b)
    return [dict(session=b["session"], host=b["host"], **{k: v[i] for k, v in c.items()}) for i in range(b["count"])]


def main(argv):
    from confluent_kafka import Consumer, TopicPartition
    schemas_dir = argv[argv.index("--schemas") + 1] if "--schemas" in argv else "schemas"
    args = [a for a in argv if not a.startswith("--") and a != schemas_dir]
    bootstrap = args[0] if args else "127.0.0.1:9092"
    schemas = load_schemas(schemas_dir)
    topic = "etw.switch-batches"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "python-switch-reader",
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    partitions = [TopicPartition(topic, p, 0) for p in consumer.list_topics(topic, timeout=10).topics[topic].partitions]
    consumer.assign(partitions)
    ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in partitions}
    while any(consumer.position([TopicPartition(topic, p)])[0].offset < end for p, end in ends.items() if end > 0):
        m = consumer.poll(1.0)
        if m is None or m.error():
            continue
        for row in rows(decode(m.value(), schemas)):
            print(json.dumps(row))
    consumer.close()


if __name__ == "__main__":
    main(sys.argv[1:])
