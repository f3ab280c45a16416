package io.swapstream.decode.inspect;

import io.swapstream.decode.SessionDecoder;
import io.swapstream.decode.merge.MergeLimits;
import io.swapstream.decode.merge.SwitchExpander;
import io.swapstream.etw.EtlReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the decode stage's merge holds when a file is decoded as a live session would be, its buffers
 * taken as they come in the file with no lateness known ahead: the most items and bytes it held, its
 * largest checkpoint, and what its limits let out of order. For sizing {@code decode --max-lateness}
 * and the memory a session needs.
 *
 * @param peakItems       the most items the merge held after a buffer
 * @param peakBytes       the most bytes its queue took
 * @param peakCheckpoint  the largest checkpoint of the merge, taken where it held the most
 * @param outOfOrder      switches a limit let out after later ones
 * @param switches        switches emitted
 * @param seconds         the trace's length, first to last switch
 */
public record LiveMergeProbe(long peakItems, long peakBytes, long peakCheckpoint, long outOfOrder, long switches, double seconds) {

    /** Decodes {@code file} as a live session with {@code limits} (a live session's: no file lateness). */
    public static LiveMergeProbe of(Path file, MergeLimits limits) throws IOException {
        long[] switches = {0};
        long[] first = {Long.MAX_VALUE};
        long[] last = {Long.MIN_VALUE};
        SessionDecoder d = new SessionDecoder("probe", null, b -> {
            switches[0] += b.count();
            if (b.count() > 0) {
                first[0] = Math.min(first[0], b.timeNanos(0));
                last[0] = Math.max(last[0], b.timeNanos(b.count() - 1));
            }
        }, null, SwitchExpander.DEFAULT_BATCH_ROWS, limits);
        long peakItems = 0;
        long peakBytes = 0;
        long peakCheckpoint = 0;
        long encodedAt = 0;
        try (EtlReader r = EtlReader.open(file)) {
            while (r.next()) {
                d.onBuffer(r.decoder(), r.bufferOffset(), r.source());
                peakBytes = Math.max(peakBytes, d.queuedBytes());
                peakItems = Math.max(peakItems, d.queued());
                // the checkpoint the stage would write now, encoded again each time the merge holds a tenth more
                if (d.queued() > encodedAt * 11 / 10) {
                    encodedAt = d.queued();
                    peakCheckpoint = Math.max(peakCheckpoint, d.checkpoint().length);
                }
            }
        }
        d.finish();
        double seconds = first[0] == Long.MAX_VALUE ? 0 : (last[0] - first[0]) / 1e9;
        return new LiveMergeProbe(peakItems, peakBytes, peakCheckpoint, d.counters().switchesOutOfOrder, switches[0], seconds);
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("peakItems", peakItems);
        m.put("peakMiB", Math.round(peakBytes / 1048576.0 * 10) / 10.0);
        m.put("peakCheckpointMiB", Math.round(peakCheckpoint / 1048576.0 * 10) / 10.0);
        m.put("switchesOutOfOrder", outOfOrder);
        m.put("switchesPerSecond", seconds > 0 ? Math.round(switches / seconds) : 0);
        return m;
    }
}
