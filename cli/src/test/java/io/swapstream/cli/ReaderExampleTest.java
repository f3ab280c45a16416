package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/reading-the-topics.md's Java reader is a whole program that compiles against Kafka's and Avro's libraries, shown as it is. */
class ReaderExampleTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theJavaReaderCompilesAndTheDocShowsItWhole(@TempDir Path out) throws Exception {
        Path source = ROOT.resolve("docs/examples/ReadThreadStats.java");
        String program = Files.readString(source);
        assertTrue(Files.readString(ROOT.resolve("docs/reading-the-topics.md")).contains("```java\n" + program + "```"),
                "docs/reading-the-topics.md shows docs/examples/ReadThreadStats.java whole");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean ok = javac.getTask(errors, null, null, List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"),
                "-Xlint:all", "-Werror"), null, javac.getStandardFileManager(null, null, null).getJavaFileObjects(source.toFile())).call();
        assertTrue(ok, errors.toString());
        assertEquals(List.of("ReadThreadStats.class"), Files.list(out).map(p -> p.getFileName().toString()).toList());
    }
}
