package io.swapstream.etw;

/** Receives each event of a buffer walk; the event view is only valid during the call. */
@FunctionalInterface
public interface TraceEventHandler {
    void onEvent(TraceEvent event);
}
