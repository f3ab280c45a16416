package io.swapstream.decode.event;

/**
 * MaximumWaitReason by OS build (docs/etw-formats.md §5). The thresholds between the known points are
 * open; adopted: ≤14393 → 0x27, 14394–21999 → 0x28, 22000–26099 → 0x2A, ≥26100 → 0x2B. A session
 * may override it.
 */
public final class MaximumWaitReason {
    private MaximumWaitReason() {}

    public static int forBuild(int build) {
        if (build <= 14393) return 0x27;
        if (build < 22000) return 0x28;
        if (build < 26100) return 0x2A;
        return 0x2B;
    }
}
