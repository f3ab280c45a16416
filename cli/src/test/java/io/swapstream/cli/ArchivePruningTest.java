package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.export.ArchivePruning;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code archive --keep} and {@code --max-size}: which files go, in which order, and what stays. */
class ArchivePruningTest {
    static final long NOW = 1_800_000_000_000L;
    static final long HOUR = 3_600_000L;

    @TempDir Path dir;

    /** An archived file of {@code bytes} bytes, written {@code agoMs} before NOW. */
    Path file(String name, int bytes, long agoMs) throws Exception {
        Path p = dir.resolve(name);
        Files.createDirectories(p.getParent());
        Files.write(p, new byte[bytes]);
        Files.setLastModifiedTime(p, FileTime.fromMillis(NOW - agoMs));
        return p;
    }

    List<Path> left() throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }

    @Test
    void keepDeletesTheFilesWrittenLongerAgoThanItOnly() throws Exception {
        Path old = file("web01/134000000000000000.etl", 10, 49 * HOUR);
        Path minute = file("db07/20261128T140300Z_134000000000000000.etl", 10, 48 * HOUR + 1);
        Path young = file("web01/134000000000000001.etl", 10, 47 * HOUR);
        Path edge = file("web01/134000000000000002.etl", 10, 48 * HOUR);
        List<Path> told = new ArrayList<>();
        var deleted = new ArchivePruning(48 * HOUR, null).prune(dir, NOW, d -> told.add(d.file()));
        assertEquals(List.of(old, minute), told, "oldest first");
        assertTrue(deleted.stream().allMatch(ArchivePruning.Deleted::forAge));
        assertEquals(List.of(young, edge).stream().sorted().toList(), left(), "exactly --keep old stays");
    }

    @Test
    void maxSizeDeletesTheOldestUntilTheFolderFits() throws Exception {
        Path a = file("web01/1.etl", 400, 5 * HOUR);
        Path b = file("db07/2.etl", 300, 4 * HOUR);
        Path c = file("web01/3.etl", 200, 3 * HOUR);
        Path d = file("db07/4.etl", 100, 2 * HOUR);
        List<Path> told = new ArrayList<>();
        new ArchivePruning(-1, 350L).prune(dir, NOW, x -> told.add(x.file()));
        // 1000 bytes: without the 400 and the 300 the folder holds 300, at most 350
        assertEquals(List.of(a, b), told);
        assertEquals(List.of(d, c), left());
        told.clear();
        new ArchivePruning(-1, 300L).prune(dir, NOW, x -> told.add(x.file()));
        assertEquals(List.of(), told, "a folder holding exactly --max-size is left as it is");
    }

    @Test
    void aFileLargerThanMaxSizeGoesTooAndTiesGoInNameOrder() throws Exception {
        Path b = file("web01/b.etl", 100, HOUR);
        Path a = file("web01/a.etl", 100, HOUR);
        Path huge = file("db07/huge.etl", 1000, 0);
        List<Path> told = new ArrayList<>();
        new ArchivePruning(-1, 500L).prune(dir, NOW, x -> told.add(x.file()));
        assertEquals(List.of(a, b, huge), told, "written in the same millisecond: by name; then the newest, alone over the limit");
        assertEquals(List.of(), left());
    }

    @Test
    void keepAndMaxSizeTogether() throws Exception {
        Path old = file("h/old.etl", 10, 10 * HOUR);
        Path big = file("h/big.etl", 500, 2 * HOUR);
        Path small = file("h/small.etl", 100, HOUR);
        List<ArchivePruning.Deleted> told = new ArrayList<>();
        new ArchivePruning(5 * HOUR, 200L).prune(dir, NOW, told::add);
        assertEquals(List.of(new ArchivePruning.Deleted(old, true), new ArchivePruning.Deleted(big, false)), told);
        assertEquals(List.of(small), left());
    }

    @Test
    void filesBeingWrittenAndOtherFilesAreNeverTouched() throws Exception {
        Path part = file("web01/134000000000000000.etl.part", 1000, 100 * HOUR);
        Path note = file("README.txt", 1000, 100 * HOUR);
        Path deep = file("a/b/deep.etl", 1000, 100 * HOUR); // below DIR/HOST: not the archive's
        Path etl = file("web01/1.etl", 10, 100 * HOUR);
        new ArchivePruning(HOUR, 1L).prune(dir, NOW, x -> {});
        assertFalse(Files.exists(etl));
        assertEquals(List.of(note, deep, part).stream().sorted().toList(), left());
    }

    @Test
    void noLimitsDeleteNothing() throws Exception {
        file("web01/1.etl", 10, 1000 * HOUR);
        assertFalse(ArchivePruning.NONE.prunes());
        assertEquals(List.of(), ArchivePruning.NONE.prune(dir, NOW, x -> {}));
        assertEquals(1, left().size());
    }

    @Test
    void theCommandRefusesBadLimitsInOneLine() {
        for (String[] bad : List.of(new String[] {"--keep", "soon"}, new String[] {"--keep", "0s"}, new String[] {"--max-size", "0"},
                new String[] {"--max-size", "lots"})) {
            List<String> args = new ArrayList<>(List.of("archive", "--to", dir.toString(), "-b", "127.0.0.1:9"));
            args.addAll(List.of(bad));
            CliRunner r = CliRunner.run(args.toArray(String[]::new));
            assertEquals(Swapstream.EXIT_BAD_INPUT, r.exit(), String.join(" ", bad) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }
}
