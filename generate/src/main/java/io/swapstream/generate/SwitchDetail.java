package io.swapstream.generate;

/**
 * What a CSwitch event carries beyond the compact packets (docs/etw-formats.md §4): the bytes at
 * 0x0A, 0x0B, 0x0F and 0x14 of WMI_CONTEXTSWAP, as the simulated scheduler decided them.
 *
 * @param previousCStateOrRank      the C-state the processor left when the old thread is idle, else the old thread's rank
 * @param newThreadPriorityDecrement the boost above base the new thread still carries
 * @param oldThreadIdealProcessor   the old thread's ideal processor
 * @param oldThreadRemainingQuantum what is left of the old thread's quantum, in units of 1,024 cycles
 */
public record SwitchDetail(int previousCStateOrRank, int newThreadPriorityDecrement, int oldThreadIdealProcessor,
                           int oldThreadRemainingQuantum) {
}
