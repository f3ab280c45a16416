package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.swapstream.etw.BufferHeader;
import io.swapstream.etw.EtlFormatException;
import io.swapstream.etw.EtlReader;
import io.swapstream.generate.GeneratorOptions;
import io.swapstream.generate.TraceGenerator;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded mutations of whole files (bit flips, truncations, edits of the buffers' and events' length fields
 * and of compressed buffers' match lengths, zeroed runs) through the offline decoder, as {@code stats} and
 * {@code inspect} take a file: every input decodes or fails with {@link EtlFormatException}. The generated
 * traces of both encodings are also sent compressed (literal runs, as an XPRESS encoder may write), so the
 * decompressor is fuzzed too; the real files when present, the small ones. A few hundred cases, a few
 * seconds of CPU: the decoder's work is bounded per byte, so no case can take long.
 */
class FileFuzzTest {
    @TempDir Path dir;

    @Test
    void everyMutatedFileDecodesOrFailsWithTheFormatsOwnError() throws Exception {
        int cases = 0;
        int refused = 0;
        for (String mode : List.of("compact", "cswitch")) {
            Path f = dir.resolve(mode + ".etl");
            TraceGenerator.generate(f, GeneratorOptions.defaults().withSwitches(2000).withMode(mode), 0x52);
            byte[] plain = Files.readAllBytes(f);
            byte[] compressed = compressed(plain);
            assertEquals(switches(plain), switches(compressed), "the compressed copy of the " + mode + " trace decodes the same");
            for (byte[] file : List.of(plain, compressed)) {
                for (int seed = 0; seed < 60; seed++) {
                    cases++;
                    refused += decodes(mode + " seed " + seed, mutate(file, new Random(seed))) ? 0 : 1;
                }
            }
        }
        Path real = Path.of(System.getProperty("swapstream.testdata", "../../shared/testdata/etl"));
        if (Files.isDirectory(real)) {
            List<Path> small;
            try (Stream<Path> s = Files.list(real)) {
                small = s.filter(p -> p.toString().endsWith(".etl")).filter(p -> p.toFile().length() <= 400 * 1024).sorted().toList();
            }
            for (Path p : small) {
                byte[] file = Files.readAllBytes(p);
                for (int seed = 0; seed < 6; seed++) {
                    cases++;
                    refused += decodes(p.getFileName() + " seed " + seed, mutate(file, new Random(seed))) ? 0 : 1;
                }
            }
        }
        assertTrue(refused > cases / 4 && refused < cases, refused + " of " + cases + " mutated files refused");
    }

    /** True when the file decodes; false when it is refused with the format's error; anything else fails the test. */
    static boolean decodes(String name, byte[] file) {
        try (EtlReader r = EtlReader.of(name, ByteBuffer.wrap(file))) {
            SessionDecoder.decodeBatches(r, "h", null, b -> { }, t -> { });
            return true;
        } catch (EtlFormatException e) {
            assertTrue(e.getMessage().startsWith(name + ": byte offset "), e.getMessage());
            assertEquals(-1, e.getMessage().indexOf('\n'), "one line");
            return false;
        } catch (Exception e) {
            throw new AssertionError(name + ": " + e, e);
        }
    }

    static long switches(byte[] file) throws Exception {
        long[] n = {0};
        try (EtlReader r = EtlReader.of("t", ByteBuffer.wrap(file))) {
            SessionDecoder.decodeBatches(r, "h", null, b -> n[0] += b.count(), t -> { });
        }
        return n[0];
    }

    /** One of six ways a file goes bad; some leave it well formed (a flipped payload byte), as they may. */
    static byte[] mutate(byte[] file, Random r) {
        byte[] b = file.clone();
        ByteBuffer le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> buffers = buffers(file);
        int at = buffers.get(r.nextInt(buffers.size()));
        switch (r.nextInt(6)) {
            case 0 -> {
                for (int i = 1 + r.nextInt(16); i > 0; i--) b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
            }
            case 1 -> b = Arrays.copyOf(b, r.nextInt(b.length));
            case 2 -> {
                // a buffer's size or fill mark
                int[] values = {0, 0x47, 0x48, 0x49, 0x7FFFFFFF, 0xFFFFFFFF, 64 << 20, le.getInt(at) + 8, le.getInt(at) - 8, r.nextInt()};
                le.putInt(at + (r.nextBoolean() ? 0 : 0x30), values[r.nextInt(values.length)]);
            }
            case 3 -> {
                // the size field of an event header somewhere after the buffer header
                int p = Math.min(b.length - 2, at + 0x48 + (r.nextInt(4096) & ~7) + 4);
                le.putShort(p, (short) r.nextInt(65536));
            }
            case 4 -> {
                // a match whose 32-bit length is past anything, or wraps an int: at a flag word of compressed()'s
                // literal runs, after some output
                int p = Math.min(b.length - 16, at + 0x48 + 36 * (1 + r.nextInt(8)));
                long[] lengths = {0x7FFFFFFDL, 0x7FFFFFFEL, 0x7FFFFFFFL, 0xFFFFFFFFL, 21, r.nextInt() & 0xFFFFFFFFL};
                le.putInt(p, 0xFFFFFFFF).put(p + 4, (byte) 7).put(p + 5, (byte) 0).put(p + 6, (byte) 0x0F).put(p + 7, (byte) 0xFF)
                        .putShort(p + 8, (short) 0).putInt(p + 10, (int) lengths[r.nextInt(lengths.length)]);
            }
            default -> {
                int from = r.nextInt(b.length);
                Arrays.fill(b, from, Math.min(b.length, from + 1 + r.nextInt(4096)), (byte) 0);
            }
        }
        return b;
    }

    /** Where each buffer starts, walking the BufferSize fields of a well-formed file. */
    static List<Integer> buffers(byte[] file) {
        ByteBuffer le = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> at = new ArrayList<>();
        for (int p = 0; p + BufferHeader.SIZE <= file.length && le.getInt(p) >= BufferHeader.SIZE; p += le.getInt(p)) at.add(p);
        return at;
    }

    /** The file with every buffer but the first compressed: XPRESS literal runs, a zero flag word before each 32 bytes. */
    static byte[] compressed(byte[] file) {
        ByteBuffer le = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Integer> at = buffers(file);
        for (int i = 0; i < at.size(); i++) {
            int p = at.get(i);
            int size = le.getInt(p);
            if (i == 0) {
                out.write(file, p, size);
                continue;
            }
            int fill = le.getInt(p + 0x30);
            ByteArrayOutputStream data = new ByteArrayOutputStream();
            for (int q = p + BufferHeader.SIZE; q < p + fill; q += 32) {
                data.writeBytes(new byte[4]);
                data.write(file, q, Math.min(32, p + fill - q));
            }
            ByteBuffer h = ByteBuffer.wrap(Arrays.copyOfRange(file, p, p + BufferHeader.SIZE)).order(ByteOrder.LITTLE_ENDIAN);
            h.putInt(0, BufferHeader.SIZE + data.size());
            h.putShort(0x34, (short) (h.getShort(0x34) | BufferHeader.FLAG_COMPRESSED));
            out.writeBytes(h.array());
            out.writeBytes(data.toByteArray());
        }
        return out.toByteArray();
    }
}
