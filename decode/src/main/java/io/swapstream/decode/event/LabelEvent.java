package io.swapstream.decode.event;

/** An event the merge keeps in time order for what it says about threads and processes, not a switch. */
public sealed interface LabelEvent permits ThreadEvent, ProcessEvent {
    long timestamp();
}
