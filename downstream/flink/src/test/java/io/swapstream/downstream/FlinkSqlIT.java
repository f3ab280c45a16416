package io.swapstream.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/reading-the-topics.md's Flink SQL, as written there, in a local Flink 2.0 (flink-sql-connector-kafka 4.0.1-2.0,
 * flink-sql-avro-confluent-registry 2.0.0) against a broker and an Apicurio Registry the pipeline wrote to: the rows
 * are tail's, field for field. Opt-in: -Dswapstream.downstream=true.
 */
class FlinkSqlIT {
    static final List<String> PROCESS_FIELDS = List.of("processName", "windowStartNanos", "revision", "readyCount", "readyP99Nanos");

    @TempDir static Path dir;
    static Swapstream swapstream;
    static List<String> expected;

    @BeforeAll
    static void pipeline() throws Exception {
        swapstream = Swapstream.start(dir);
        Topics.runPipeline(swapstream, dir);
        List<Map<String, Object>> records = Topics.tail(swapstream, "process-stats");
        assertFalse(records.isEmpty(), "tail process-stats printed nothing");
        expected = Topics.lines(records, PROCESS_FIELDS);
    }

    @AfterAll
    static void stop() throws Exception {
        if (swapstream != null) swapstream.close();
    }

    private static final Pattern SET = Pattern.compile("(?is)SET\\s+'([^']+)'\\s*=\\s*'([^']*)'");

    /**
     * Runs a snippet's statements as Flink's SQL client does: its SET statements configure the session (the Table
     * API's executeSql takes no SET), the others run in order; the last one's result.
     */
    static TableResult execute(String snippet) throws Exception {
        return executeText(Snippets.get(snippet, swapstream.bootstrap(), swapstream.registry()));
    }

    static TableResult executeText(String sql) {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "1");
        conf.setString("rest.bind-address", "127.0.0.1");
        conf.setString("rest.address", "127.0.0.1");
        List<String> statements = new ArrayList<>();
        for (String statement : Snippets.statements(sql)) {
            Matcher m = SET.matcher(statement);
            if (m.matches()) {
                conf.setString(m.group(1), m.group(2));
            } else {
                statements.add(statement);
            }
        }
        TableEnvironment t = TableEnvironment.create(EnvironmentSettings.newInstance().withConfiguration(conf).build());
        TableResult last = null;
        for (String statement : statements) last = t.executeSql(statement);
        return last;
    }

    static List<String> lines(List<Row> rows) {
        List<String> out = new ArrayList<>();
        for (Row r : rows) {
            Object[] f = new Object[r.getArity()];
            for (int i = 0; i < f.length; i++) f[i] = r.getField(i);
            out.add(Topics.line(f));
        }
        out.sort(null);
        return out;
    }

    @Test
    void theStreamingQueryGivesTailsRows() throws Exception {
        List<Row> rows = new ArrayList<>();
        // an unbounded query: take as many rows as tail printed, then stop it (the topic holds no more)
        try (CloseableIterator<Row> it = execute("flink-process-stats").collect()) {
            while (rows.size() < expected.size() && it.hasNext()) rows.add(it.next());
        }
        assertEquals(expected, lines(rows));
        System.out.printf("Flink, streaming: %d rows of etw.process-stats, each equal to tail's%n", rows.size());
    }

    @Test
    void theBatchQueryEndsWithTailsRows() throws Exception {
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = execute("flink-process-stats-batch").collect()) {
            it.forEachRemaining(rows::add);
        }
        assertEquals(expected, lines(rows));
        System.out.printf("Flink, batch: %d rows of etw.process-stats, each equal to tail's%n", rows.size());
    }

    @Test
    void batchModeWithoutAnEndIsRefused() throws Exception {
        String sql = Snippets.get("flink-process-stats-batch", swapstream.bootstrap(), swapstream.registry());
        assertTrue(sql.contains(", 'scan.bounded.mode' = 'latest-offset'"), sql);
        ValidationException e = assertThrows(ValidationException.class,
                () -> executeText(sql.replace(", 'scan.bounded.mode' = 'latest-offset'", "")).collect().close());
        assertTrue(e.getMessage().contains("unbounded"), e.getMessage());
        System.out.println("Flink, batch without 'scan.bounded.mode': " + e.getMessage().lines().findFirst().orElse(""));
    }
}
