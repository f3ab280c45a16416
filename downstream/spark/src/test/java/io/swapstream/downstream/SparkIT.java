package io.swapstream.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/reading-the-topics.md's Spark reader, as written there, compiled and run in Spark 4.0 (local[1]) against a
 * broker and an Apicurio Registry the pipeline wrote to: the rows are tail's, field for field. Opt-in:
 * -Dswapstream.downstream=true.
 */
class SparkIT {
    static final List<String> PROCESS_FIELDS = List.of("processName", "windowStartNanos", "revision", "readyCount", "readyP99Nanos");

    @TempDir static Path dir;
    static Swapstream swapstream;
    static SparkSession spark;

    @BeforeAll
    static void pipeline() throws Exception {
        swapstream = Swapstream.start(dir);
        Topics.runPipeline(swapstream, dir);
        spark = SparkSession.builder().master("local[1]").appName("swapstream-downstream")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.local.dir", dir.resolve("spark").toString())
                .config("spark.sql.warehouse.dir", dir.resolve("warehouse").toString())
                .getOrCreate();
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) spark.stop();
        if (swapstream != null) swapstream.close();
    }

    /** Compiles a snippet, a whole class, against this class path and loads it. */
    static Class<?> compile(String snippet, String className) throws Exception {
        Path src = dir.resolve("src").resolve(className + ".java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, Snippets.get(snippet, swapstream.bootstrap(), swapstream.registry()));
        Path out = Files.createDirectories(dir.resolve("classes-" + className));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean ok = javac.getTask(errors, null, null, List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"),
                "-proc:none"), null, javac.getStandardFileManager(null, null, null).getJavaFileObjects(src)).call();
        assertTrue(ok, "the snippet " + snippet + " compiles:\n" + errors);
        URLClassLoader loader = new URLClassLoader(new java.net.URL[] {out.toUri().toURL()}, SparkIT.class.getClassLoader());
        return loader.loadClass(className);
    }

    @Test
    void theDocumentedReaderGivesTailsRows() throws Exception {
        List<Map<String, Object>> records = Topics.tail(swapstream, "process-stats");
        assertFalse(records.isEmpty(), "tail process-stats printed nothing");
        List<String> expected = Topics.lines(records, PROCESS_FIELDS);

        @SuppressWarnings("unchecked")
        Dataset<Row> rows = (Dataset<Row>) compile("spark-process-stats", "ReadProcessStats").getMethod("read", SparkSession.class)
                .invoke(null, spark);
        List<String> got = new ArrayList<>();
        for (Row r : rows.select(PROCESS_FIELDS.get(0), PROCESS_FIELDS.subList(1, PROCESS_FIELDS.size()).toArray(String[]::new)).collectAsList()) {
            Object[] f = new Object[r.length()];
            for (int i = 0; i < f.length; i++) f[i] = r.get(i);
            got.add(Topics.line(f));
        }
        got.sort(null);
        assertEquals(expected, got);
        System.out.printf("Spark: %d rows of etw.process-stats, each equal to tail's%n", got.size());
    }
}
