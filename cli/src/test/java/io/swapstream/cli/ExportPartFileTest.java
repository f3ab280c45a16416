package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExportPartFileTest {
    @TempDir
    Path dir;

    /** An export is renamed from its part file: it keeps that file's mode, which must be what any new file gets here. */
    @Test
    void aPartFileHasTheModeOfAnyNewFileAndANameOfItsOwn() throws Exception {
        Path target = dir.resolve("web01.etl");
        Path a = ExportCommand.partFile(target);
        Path b = ExportCommand.partFile(target);
        assertNotEquals(a, b);
        assertTrue(a.getFileName().toString().startsWith(".web01.etl.") && a.toString().endsWith(".part"), a.toString());
        Path plain = Files.createFile(dir.resolve("plain"));
        if (Files.getFileStore(dir).supportsFileAttributeView("posix")) {
            assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(a));
        }
    }
}
