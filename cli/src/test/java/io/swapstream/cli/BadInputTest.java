package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.etw.ClockType;
import io.swapstream.etw.EtlWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input: one clear line naming the file and byte offset, a non-zero exit, no stack trace. */
class BadInputTest {
    static final int BUF = 4096;
    @TempDir Path dir;

    /** A small valid trace: header buffer then one buffer per processor. */
    Path valid(String name, int clockType) throws Exception {
        Path f = dir.resolve(name);
        EtlWriter.Session s = new EtlWriter.Session(BUF, 19041, 2, clockType, 10_000_000L, 3000,
                132223104000000000L, 132223000000000000L, 1, "L", "x.etl");
        try (EtlWriter w = new EtlWriter(f, s, 100)) {
            for (int i = 0; i < 10; i++) w.perfInfoEvent(i % 2, 0x0524, 4, 100 + i, null, null, new byte[24], 24);
        }
        return f;
    }

    static void assertOneLine(CliRunner r, Path f, long offset, String reason) {
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), r.err());
        assertEquals("", r.out());
        String err = r.err().strip();
        assertFalse(err.contains("\n"), "one line: " + err);
        assertFalse(err.contains("Exception") || err.contains("\tat "), "no stack trace: " + err);
        assertTrue(err.contains(f.toString()), err);
        if (offset >= 0) assertTrue(err.contains("byte offset " + offset + " "), err);
        assertTrue(err.contains(reason), err);
    }

    @Test
    void randomBytes() throws Exception {
        byte[] b = new byte[10_000];
        new Random(7).nextBytes(b);
        Path f = Files.write(dir.resolve("random.etl"), b);
        CliRunner r = CliRunner.run("inspect", f.toString());
        assertOneLine(r, f, -1, "byte offset");
    }

    @Test
    void emptyFile() throws Exception {
        Path f = Files.write(dir.resolve("empty.etl"), new byte[0]);
        assertOneLine(CliRunner.run("inspect", f.toString()), f, 0, "empty file");
    }

    @Test
    void missingFile() {
        Path f = dir.resolve("nope.etl");
        CliRunner r = CliRunner.run("inspect", f.toString());
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit());
        assertTrue(r.err().strip().endsWith("no such file"), r.err());
    }

    @Test
    void truncatedBuffer() throws Exception {
        Path f = valid("trunc.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(b, BUF + 1000));
        assertOneLine(CliRunner.run("inspect", f.toString()), f, BUF, "truncated");
    }

    @Test
    void aFileCutAtABuffersEndIsRefusedByTheCommandsThatComputeFromIt() throws Exception {
        // frames whole: only its logfile header, which counts what the logger wrote, shows what is missing
        Path f = valid("cut.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(b, b.length - BUF));
        int buffers = b.length / BUF;
        for (String command : new String[] {"stats", "switches"}) {
            assertOneLine(CliRunner.run(command, f.toString()), f, b.length - BUF, "its logfile header says " + buffers
                    + " buffers were written; the file holds " + (buffers - 1) + ": cut short");
        }
    }

    @Test
    void bufferSizeRunsPastTheFile() throws Exception {
        Path f = valid("size.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(2 * BUF, 1 << 20);
        Files.write(f, b);
        assertOneLine(CliRunner.run("inspect", f.toString()), f, 2 * BUF, "runs past the end");
    }

    @Test
    void eventRunsPastTheFillMark() throws Exception {
        Path f = valid("event.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        // first event of the second buffer: PERFINFO Size at +4
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putShort(BUF + 0x48 + 4, (short) 0x400);
        Files.write(f, b);
        assertOneLine(CliRunner.run("inspect", f.toString()), f, BUF + 0x48, "runs past the fill mark");
    }

    @Test
    void unknownHeaderType() throws Exception {
        Path f = valid("type.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        b[BUF + 0x48 + 2] = 0x33;
        Files.write(f, b);
        assertOneLine(CliRunner.run("inspect", f.toString()), f, BUF + 0x48, "unknown trace header type 0x33");
    }

    @Test
    void corruptCompressedBuffer() throws Exception {
        Path f = valid("xpress.etl", ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        ByteBuffer v = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        // mark the second buffer compressed; its plain event bytes are not a valid XPRESS stream
        v.putShort(BUF + 0x34, (short) (v.getShort(BUF + 0x34) | 0x40));
        v.putInt(BUF + 0x48, 0x80000000); // flag word: first item a match
        v.putShort(BUF + 0x4C, (short) (100 << 3)); // distance 101 with no output yet
        Files.write(f, b);
        assertOneLine(CliRunner.run("inspect", f.toString()), f, BUF + 0x4C, "corrupt compressed buffer");
    }

    @Test
    void rawClockType() throws Exception {
        Path f = valid("clock.etl", ClockType.RAW);
        // header event at 0x48, payload at 0x68, ReservedFlags at payload + 0x110
        assertOneLine(CliRunner.run("inspect", f.toString()), f, 0x48 + 0x20 + 0x110, "unsupported clock type 0");
    }

    @Test
    void goodFilesStillReportNextToABadOne() throws Exception {
        Path good = valid("good.etl", ClockType.PERFCOUNTER);
        Path bad = Files.write(dir.resolve("bad.etl"), new byte[100]);
        CliRunner r = CliRunner.run("inspect", "--format", "json", bad.toString(), good.toString());
        assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit());
        assertTrue(r.out().contains("\"buffers\":3"), r.out());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    /**
     * The second buffer made compressed: a literal, then a match of distance 1 whose 32-bit length is
     * {@code length32}; it claims its own fill mark, or {@code fill}.
     */
    Path crafted(String name, int fill, long length32) throws Exception {
        Path f = valid(name, ClockType.PERFCOUNTER);
        byte[] b = Files.readAllBytes(f);
        ByteBuffer v = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        v.putShort(BUF + 0x34, (short) (v.getShort(BUF + 0x34) | 0x40));
        if (fill > 0) v.putInt(BUF + 0x30, fill);
        v.putInt(BUF + 0x48, 0x40000000).put(BUF + 0x4C, (byte) 0).putShort(BUF + 0x4D, (short) 7).put(BUF + 0x4F, (byte) 0x0F)
                .put(BUF + 0x50, (byte) 0xFF).putShort(BUF + 0x51, (short) 0).putInt(BUF + 0x53, (int) length32);
        Files.write(f, b);
        return f;
    }

    @Test
    void aMatchLengthThatWrapsAnIntIsOneLineForEveryOfflineCommand() throws Exception {
        // once an ArrayIndexOutOfBoundsException: "internal error, please report it", exit 1
        Path f = crafted("wrap.etl", 0, 0x7FFFFFFDL);
        for (String command : new String[] {"inspect", "stats"}) {
            assertOneLine(CliRunner.run(command, f.toString()), f, BUF + 0x48 + 11, "match of 2147483648 bytes runs past");
        }
    }

    @Test
    void aCompressedBufferClaimingMoreThanItsLoggerWroteIsOneLine() throws Exception {
        // 20 bytes that would expand to 1 MiB of zeros: the logger's buffers are of 4 KiB
        Path f = crafted("bomb.etl", 1 << 20, (1 << 20) - 0x48 - 4);
        for (String command : new String[] {"inspect", "stats"}) {
            assertOneLine(CliRunner.run(command, f.toString()), f, BUF + 0x30, "more than its logger's buffer size 4096");
        }
    }
}
