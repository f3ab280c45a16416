package io.swapstream.batch;

/**
 * What the trace says about a thread (docs/architecture.md "Topics and records", etw.threads): its process, names, life.
 * Null where the trace has no process/thread events for it.
 */
public record ThreadLabel(String session, int threadId, Integer processId, String processName, String threadName,
                         Integer basePriority, Long startNanos, Long endNanos) {}
