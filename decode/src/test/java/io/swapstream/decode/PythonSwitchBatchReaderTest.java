package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.swapstream.batch.AvroRecords;
import io.swapstream.batch.SwitchBatchSerde;
import io.swapstream.batch.SwitchRow;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import io.swapstream.schemas.avro.ContextSwitchBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/examples/read_switch_batches.py, the documented Python decoder, reads the batches the serde
 * writes back into the decoder's rows. Runs where python3 with Apache Avro's library is installed
 * (Debian: python3-avro); skips with that message elsewhere.
 */
class PythonSwitchBatchReaderTest {
    @TempDir Path dir;

    @Test
    void thePythonExampleDecodesEveryRow() throws Exception {
        String python = pythonWithAvro();
        assumeTrue(python != null, "no python3 with the avro module (apt-get install python3-avro): the Python example is not run");
        Path script = Path.of("..", "docs", "examples", "read_switch_batches.py").toAbsolutePath().normalize();
        Path f = dir.resolve("t.etl");
        TraceGenerator.generate(f, GeneratorOptions.defaults().withMode("cswitch").withPmc(2).withSwitches(6_000).withExitRate(0.2), 0x37);
        SwitchBatchSerde serde = new SwitchBatchSerde();
        List<String> values = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        SessionDecoder.decodeBatches(f, "h", null, b -> {
            values.add(HexFormat.of().formatHex(serde.serialize("t", b)));
            for (int i = 0; i < b.count(); i++) expected.add(json(AvroRecords.of(b.row(i))));
        }, null);
        Path schemas = Files.createDirectories(dir.resolve("schemas"));
        Files.writeString(schemas.resolve("ContextSwitchBatch.avsc"), ContextSwitchBatch.getClassSchema().toString(true));
        byte[] fp = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(SchemaNormalization.parsingFingerprint64(ContextSwitchBatch.getClassSchema())).array();
        Files.writeString(schemas.resolve("fingerprints.txt"), "ContextSwitchBatch current " + HexFormat.of().formatHex(fp) + "\n");
        Path in = Files.write(dir.resolve("values.txt"), values);
        String program = String.join("\n",
                "import json, sys",
                "sys.path.insert(0, sys.argv[1])",
                "import read_switch_batches as r",
                "schemas = r.load_schemas(sys.argv[2])",
                "for line in open(sys.argv[3]):",
                "    for row in r.rows(r.decode(bytes.fromhex(line.strip()), schemas)):",
                "        print(json.dumps([row[k] for k in sys.argv[4].split(',')], separators=(',', ':')))");
        Process p = new ProcessBuilder(python, "-c", program, script.getParent().toString(), schemas.toString(), in.toString(),
                String.join(",", FIELDS)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(true, p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertEquals(expected, out.lines().toList());
    }

    private static final List<String> FIELDS = SwitchRow.FIELDS.subList(2, SwitchRow.FIELDS.size());

    /** The row's fields as Python's json.dumps writes them; symbols past the enum tables as Avro stores them. */
    private static String json(io.swapstream.schemas.avro.ContextSwitch row) {
        StringBuilder b = new StringBuilder("[");
        for (String field : FIELDS) {
            if (b.length() > 1) b.append(',');
            Object v = row.get(field);
            if (v == null) {
                b.append("null");
            } else if (v instanceof CharSequence s) {
                String stored = switch (field) {
                    case "oldThreadState" -> known(io.swapstream.schemas.avro.ThreadState.class, s.toString(), "Unknown");
                    case "oldThreadWaitReason" -> known(io.swapstream.schemas.avro.WaitReason.class, s.toString(), "Unknown");
                    case "oldThreadWaitMode" -> known(io.swapstream.schemas.avro.WaitMode.class, s.toString(), null);
                    default -> s.toString();
                };
                b.append(stored == null ? "null" : "\"" + stored + "\"");
            } else if (v instanceof List<?> l) {
                b.append('[');
                for (int i = 0; i < l.size(); i++) b.append(i > 0 ? "," : "").append(l.get(i));
                b.append(']');
            } else {
                b.append(v);
            }
        }
        return b.append(']').toString();
    }

    private static <E extends Enum<E>> String known(Class<E> type, String s, String otherwise) {
        for (E e : type.getEnumConstants()) if (e.name().equals(s)) return s;
        return otherwise;
    }

    /** The first python3 that has Apache Avro's library: the one on the PATH, or Debian's (a pyenv shim may come first). */
    private static String pythonWithAvro() {
        for (String python : List.of("python3", "/usr/bin/python3")) {
            try {
                Process p = new ProcessBuilder(python, "-c", "import avro.io, avro.schema").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) return python;
            } catch (java.io.IOException e) {
                // not installed: try the next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }
}
