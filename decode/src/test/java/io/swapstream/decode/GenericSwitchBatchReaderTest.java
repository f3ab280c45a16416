package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import java.nio.file.Path;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The documented decoding, on Avro's generic records, gives every row the decoder made. */
class GenericSwitchBatchReaderTest {
    @TempDir Path dir;

    /** A value as the schema holds it: a kernel value past the enum's table is its Unknown symbol (a wait mode has none: null). */
    private static Object asStored(String field, Object v) {
        if (v == null) return null;
        String s = v.toString();
        return switch (field) {
            case "oldThreadState" -> symbol(io.swapstream.schemas.avro.ThreadState.class, s, "Unknown");
            case "oldThreadWaitReason" -> symbol(io.swapstream.schemas.avro.WaitReason.class, s, "Unknown");
            case "oldThreadWaitMode" -> symbol(io.swapstream.schemas.avro.WaitMode.class, s, null);
            default -> v instanceof CharSequence ? s : v;
        };
    }

    private static <E extends Enum<E>> String symbol(Class<E> type, String s, String otherwise) {
        for (E e : type.getEnumConstants()) if (e.name().equals(s)) return s;
        return otherwise;
    }

    /** The page shows this decoder's code as it is here (its methods, de-indented). */
    @Test
    void thePageShowsThisCode() throws Exception {
        String page = java.nio.file.Files.readString(Path.of("..", "docs", "reading-the-topics.md"));
        int section = page.indexOf("## Decoding a switch batch");
        int from = page.indexOf("```java\n", section) + "```java\n".length();
        String shown = page.substring(from, page.indexOf("```\n", from));
        String source = java.nio.file.Files.readString(Path.of("src", "test", "java", "io", "swapstream", "decode", "GenericSwitchBatchReader.java"));
        String code = source.lines().map(l -> l.startsWith("    ") ? l.substring(4) : l).collect(java.util.stream.Collectors.joining("\n"));
        assertTrue(code.contains(shown.strip()), "docs/reading-the-topics.md shows GenericSwitchBatchReader's methods as they are");
    }

    @Test
    void theDocumentedDecodingGivesTheDecodersRows() throws Exception {
        int rows = 0;
        for (String mode : new String[] {"cswitch", "compact"}) {
            Path f = dir.resolve(mode + ".etl");
            TraceGenerator.generate(f, GeneratorOptions.defaults().withMode(mode).withPmc(mode.equals("cswitch") ? 2 : 0)
                    .withSwitches(20_000).withExitRate(0.2), 0x36);
            SwitchBatchSerde serde = new SwitchBatchSerde();
            BinaryMessageDecoder<GenericRecord> generic = new BinaryMessageDecoder<>(GenericData.get(), ContextSwitchBatch.getClassSchema());
            int[] counted = {0};
            SessionDecoder.decodeBatches(f, "h", null, b -> {
                GenericRecord record;
                try {
                    record = generic.decode(serde.serialize("t", b));
                } catch (java.io.IOException e) {
                    throw new AssertionError(e);
                }
                Map<String, Object[]> columns = GenericSwitchBatchReader.columns(record);
                for (int i = 0; i < b.count(); i++) {
                    io.swapstream.schemas.avro.ContextSwitch want = AvroRecords.of(b.row(i));
                    for (Map.Entry<String, Object[]> c : columns.entrySet()) {
                        assertEquals(asStored(c.getKey(), want.get(c.getKey())), c.getValue()[i], c.getKey() + " of row " + i);
                    }
                }
                counted[0] += b.count();
            }, null);
            rows += counted[0];
        }
        assertTrue(rows >= 40_000, rows + " rows");
    }
}
