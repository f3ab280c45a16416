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
import org.apache.flink.formats.avro.typeutils.AvroSchemaConverter;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
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

    /** A table's column list, every field of the registry's latest schema for the topic, as Flink's Avro converter maps them. */
    static String columns(String schema) {
        RowType row = (RowType) AvroSchemaConverter.convertToDataType(schema).getLogicalType();
        List<String> out = new ArrayList<>();
        for (RowType.RowField f : row.getFields()) out.add("`" + f.getName() + "` " + f.getType().asSerializableString());
        return String.join(", ", out);
    }

    static String latestSchema(String topic) throws Exception {
        return (String) Json.object(swapstream.ccompat("/subjects/" + topic + "-value/versions/latest")).get("schema");
    }

    /** A value Flink gave, as maps and lists (a row by its field names). */
    static Object plain(Object v, LogicalType type) {
        if (v == null) return null;
        if (type instanceof RowType r) {
            Row row = (Row) v;
            Map<String, Object> m = new java.util.LinkedHashMap<>();
            for (int i = 0; i < r.getFieldCount(); i++) m.put(r.getFieldNames().get(i), plain(row.getField(i), r.getTypeAt(i)));
            return m;
        }
        if (type instanceof ArrayType a) {
            List<Object> l = new ArrayList<>();
            for (Object e : (Object[]) v) l.add(plain(e, a.getElementType()));
            return l;
        }
        if (type instanceof MapType m) {
            Map<Object, Object> out = new java.util.LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) out.put(e.getKey(), plain(e.getValue(), m.getValueType()));
            return out;
        }
        return v;
    }

    static List<Object> collect(TableResult result) throws Exception {
        List<DataType> types = result.getResolvedSchema().getColumnDataTypes();
        List<String> names = result.getResolvedSchema().getColumnNames();
        List<Object> out = new ArrayList<>();
        try (CloseableIterator<Row> it = result.collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                Map<String, Object> m = new java.util.LinkedHashMap<>();
                for (int i = 0; i < names.size(); i++) m.put(names.get(i), plain(r.getField(i), types.get(i).getLogicalType()));
                out.add(m);
            }
        }
        return out;
    }

    static final String SCHEMA_OPTION = ",\n  'value.avro-confluent.schema' = '<SCHEMA>'";

    /** The docs' whole-schema table on a topic: with the registry's latest schema given, or without that option. */
    static String wholeTable(String topic, boolean withSchema) throws Exception {
        String snippet = Snippets.get("flink-switch-batches", swapstream.bootstrap(), swapstream.registry());
        assertTrue(snippet.contains(SCHEMA_OPTION), snippet);
        if (!withSchema) snippet = snippet.replace(SCHEMA_OPTION, "");
        String schema = latestSchema("etw." + topic);
        return snippet.replace("'etw.switch-batches'", "'etw." + topic + "'").replace("<COLUMNS>", columns(schema))
                .replace("<SCHEMA>", schema.replace("'", "''"));
    }

    /** The docs' whole-schema table reads etw.switch-batches, every field of every record as tail --stored prints it. */
    @Test
    void theWholeSchemaReadsTheBatches() throws Exception {
        List<Map<String, Object>> records = Topics.tail(swapstream, "switch-batches", "--stored");
        List<Object> got = collect(executeText(wholeTable("switch-batches", true)));
        assertEquals(Topics.canonicalLines(records), Topics.canonicalLines(got));
        System.out.printf("Flink, etw.switch-batches with the schema given: %d records, every field equal to tail --stored%n", got.size());
    }

    /** On the other topics the same table without the schema reads every field of every record as tail prints it. */
    @Test
    void everyColumnWithoutTheSchemaReadsTheOtherTopics() throws Exception {
        List<String> report = new ArrayList<>();
        for (String topic : new java.util.TreeSet<>(Topics.RECORD_TOPICS.keySet())) {
            if (topic.equals("switch-batches")) continue;
            List<Map<String, Object>> records = Topics.tail(swapstream, topic);
            List<Object> got = collect(executeText(wholeTable(topic, false)));
            assertEquals(Topics.canonicalLines(records), Topics.canonicalLines(got), topic);
            report.add(topic + " " + got.size());
        }
        System.out.println("Flink, every column, no schema given: every field of every record equal to tail's, records per topic: "
                + String.join(", ", report));
    }

    /** A schema with an optional record (the roll-ups' added) is refused: Flink's DDL makes a nullable row's fields nullable. */
    @Test
    void theSchemaGivenIsRefusedWhereARecordIsOptional() throws Exception {
        for (String topic : List.of("process-stats", "host-stats")) {
            String sql = wholeTable(topic, true);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> collect(executeText(sql)), topic);
            assertTrue(e.getMessage().startsWith("Schema provided for 'avro-confluent' format does not match the table schema"), e.getMessage());
        }
        System.out.println("Flink, the schema given on process-stats, host-stats: refused (does not match the table schema)");
    }

    static String batchesTable(String columns) throws Exception {
        return Snippets.get("flink-process-stats-batch", swapstream.bootstrap(), swapstream.registry())
                .replace("'etw.process-stats'", "'etw.switch-batches'")
                .replace("processName STRING, windowStartNanos BIGINT, `revision` INT, readyCount BIGINT, readyP99Nanos BIGINT", columns)
                .replace("SELECT processName, windowStartNanos, `revision`, readyCount, readyP99Nanos", "SELECT *");
    }

    /** Without the schema, columns of the batches that hold no enum read; one that holds the enum fails, as the docs say. */
    @Test
    void withoutTheSchemaTheBatchesEnumFails() throws Exception {
        List<Object> got = collect(executeText(batchesTable("`session` STRING, `host` STRING, `count` INT")));
        List<Map<String, Object>> records = Topics.tail(swapstream, "switch-batches", "--stored");
        List<Map<String, Object>> expected = new ArrayList<>();
        for (Map<String, Object> r : records) expected.add(Map.of("session", r.get("session"), "host", r.get("host"), "count", r.get("count")));
        assertEquals(Topics.canonicalLines(expected), Topics.canonicalLines(got));

        Exception e = assertThrows(Exception.class,
                () -> collect(executeText(batchesTable("`session` STRING, `sourceRuns` ROW<`values` ARRAY<STRING>, `lengths` ARRAY<INT>>"))));
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        assertTrue(String.valueOf(root.getMessage()).startsWith("Found io.swapstream.schemas.avro.SwitchSource, expecting"), String.valueOf(root));
        System.out.printf("Flink, etw.switch-batches without the schema: session, host, count read (%d records, equal to tail's);"
                + " with sourceRuns: %s%n", got.size(), root);
    }

    /** Single-object records (written without the registry) are not Flink's: the query fails. */
    @Test
    void singleObjectRecordsAreUnreadable() throws Exception {
        String sql = Snippets.get("flink-process-stats-batch", swapstream.bootstrap(), swapstream.registry())
                .replace("'etw.process-stats'", "'" + Topics.SINGLE_OBJECT_PREFIX + "process-stats'");
        Exception e = assertThrows(Exception.class, () -> collect(executeText(sql)));
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        assertTrue(String.valueOf(root.getMessage()).contains("Magic number does not match"), String.valueOf(root));
        System.out.println("Flink, single-object records: " + root);
    }

    /**
     * A record of an earlier schema version (ThreadStats v1, as `swapstream schemas --register` registers it) beside one
     * of the current version, written with the Kafka client and Avro shaded in the SQL jars: with every column
     * nullable the earlier one's later fields come back NULL (not their defaults) and its others as the current one's;
     * with the NOT NULL columns Flink makes of the schema, the job fails.
     */
    @Test
    @SuppressWarnings("unchecked")
    void anEarlierVersionReadsWithNullsAndFailsNotNullColumns() throws Exception {
        String topic = "ev.thread-stats";
        swapstream.ok("schemas", "--register", swapstream.registry(), "--topic-prefix", "ev.");
        String subject = topic + "-value";
        List<Object> versions = (List<Object>) Json.parse(swapstream.ccompat("/subjects/" + subject + "/versions"));
        assertTrue(versions.size() > 1, "ThreadStats has earlier versions: " + versions);
        Map<String, Object> first = Json.object(swapstream.ccompat("/subjects/" + subject + "/versions/" + versions.get(0)));
        org.apache.flink.avro.shaded.org.apache.avro.Schema v1 =
                new org.apache.flink.avro.shaded.org.apache.avro.Schema.Parser().parse((String) first.get("schema"));
        Map<String, Object> client = Map.of("bootstrap.servers", swapstream.bootstrap(), "isolation.level", "read_committed");
        var bytes = new org.apache.flink.kafka.shaded.org.apache.kafka.common.serialization.ByteArrayDeserializer();
        byte[] current = null;
        try (var consumer = new org.apache.flink.kafka.shaded.org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(client, bytes, bytes)) {
            List<org.apache.flink.kafka.shaded.org.apache.kafka.common.TopicPartition> parts = new ArrayList<>();
            for (var p : consumer.partitionsFor("etw.thread-stats")) {
                parts.add(new org.apache.flink.kafka.shaded.org.apache.kafka.common.TopicPartition(p.topic(), p.partition()));
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            for (int polls = 0; current == null && polls < 600; polls++) { // a bound: the topic holds records
                for (var r : consumer.poll(java.time.Duration.ofMillis(500))) {
                    if (r.value() != null && current == null) current = r.value();
                }
            }
        }
        assertTrue(current != null, "a record of etw.thread-stats");
        int writerId = java.nio.ByteBuffer.wrap(current, 1, 4).getInt();
        var writer = new org.apache.flink.avro.shaded.org.apache.avro.Schema.Parser().parse(
                (String) Json.object(swapstream.ccompat("/schemas/ids/" + writerId)).get("schema"));
        var asV1 = new org.apache.flink.avro.shaded.org.apache.avro.generic.GenericDatumReader<Object>(writer, v1)
                .read(null, org.apache.flink.avro.shaded.org.apache.avro.io.DecoderFactory.get().binaryDecoder(current, 5, current.length - 5, null));
        java.io.ByteArrayOutputStream framed = new java.io.ByteArrayOutputStream();
        framed.write(0);
        framed.write(java.nio.ByteBuffer.allocate(4).putInt(((Number) first.get("id")).intValue()).array());
        var encoder = org.apache.flink.avro.shaded.org.apache.avro.io.EncoderFactory.get().binaryEncoder(framed, null);
        new org.apache.flink.avro.shaded.org.apache.avro.generic.GenericDatumWriter<Object>(v1).write(asV1, encoder);
        encoder.flush();
        try (var admin = org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers", swapstream.bootstrap()))) {
            admin.createTopics(List.of(new org.apache.flink.kafka.shaded.org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1))).all().get();
        }
        var out = new org.apache.flink.kafka.shaded.org.apache.kafka.common.serialization.ByteArraySerializer();
        try (var producer = new org.apache.flink.kafka.shaded.org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(
                Map.of("bootstrap.servers", swapstream.bootstrap()), out, out)) {
            producer.send(new org.apache.flink.kafka.shaded.org.apache.kafka.clients.producer.ProducerRecord<>(topic, framed.toByteArray())).get();
            producer.send(new org.apache.flink.kafka.shaded.org.apache.kafka.clients.producer.ProducerRecord<>(topic, current)).get();
        }

        String sql = wholeTable("thread-stats", false).replace("'etw.thread-stats'", "'" + topic + "'");
        String notNull = columns(latestSchema("etw.thread-stats"));
        List<Object> got = collect(executeText(sql.replace(notNull, notNull.replace(" NOT NULL", ""))));
        assertEquals(2, got.size());
        Map<String, Object> a = (Map<String, Object>) Topics.canonical(got.get(0));
        Map<String, Object> b = (Map<String, Object>) Topics.canonical(got.get(1));
        Topics.Versions read = Topics.Versions.of(a, b, field -> v1.getField(field) != null);
        List<String> later = read.later();
        assertFalse(later.isEmpty(), "the current record has fields version 1 lacks");
        assertEquals(read.expected(), read.older(), "the version 1 record: its fields as the current one's, the later ones NULL");

        Exception e = assertThrows(Exception.class, () -> collect(executeText(sql)));
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        System.out.printf("Flink, ThreadStats version 1 beside the current, nullable columns: %d fields NULL (%s), the others equal;"
                + " NOT NULL columns: %s%n", later.size(), String.join(", ", later), root);
        assertTrue(String.valueOf(root.getMessage()).contains("missing required field"), String.valueOf(root));
    }
}
