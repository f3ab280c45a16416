package io.swapstream.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
        spark.sparkContext().setLogLevel("WARN");
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
        return compileFile(src, className);
    }

    static Class<?> compileFile(Path src, String className) throws Exception {
        Path out = Files.createDirectories(dir.resolve("classes-" + className));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean ok = javac.getTask(errors, null, null, List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"),
                "-proc:none"), null, javac.getStandardFileManager(null, null, null).getJavaFileObjects(src)).call();
        assertTrue(ok, src + " compiles:\n" + errors);
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

    /** The same reader on every record topic (its topic name changed): every field of every record as tail prints it. */
    @Test
    void theDocumentedReaderReadsEveryTopicWhole() throws Exception {
        String source = Snippets.get("spark-process-stats", swapstream.bootstrap(), swapstream.registry());
        List<String> report = new ArrayList<>();
        for (Map.Entry<String, List<String>> topic : new java.util.TreeMap<>(Topics.RECORD_TOPICS).entrySet()) {
            List<Map<String, Object>> records = Topics.tail(swapstream, topic.getKey(), topic.getValue().toArray(String[]::new));
            assertFalse(records.isEmpty(), "tail " + topic.getKey() + " printed nothing");
            String className = "Read" + topic.getKey().replace("-", "_");
            Path src = dir.resolve("src").resolve(className + ".java");
            Files.createDirectories(src.getParent());
            assertTrue(source.contains("\"etw.process-stats\""));
            Files.writeString(src, source.replace("\"etw.process-stats\"", "\"etw." + topic.getKey() + "\"")
                    .replace("class ReadProcessStats", "class " + className));
            @SuppressWarnings("unchecked")
            Dataset<Row> rows = (Dataset<Row>) compileFile(src, className).getMethod("read", SparkSession.class).invoke(null, spark);
            List<Object> got = new ArrayList<>();
            for (String json : rows.toJSON().collectAsList()) got.add(Json.parse(json));
            assertEquals(Topics.canonicalLines(records), Topics.canonicalLines(got), topic.getKey());
            report.add(topic.getKey() + " " + got.size());
        }
        System.out.println("Spark: every field of every record equal to tail's, records per topic: " + String.join(", ", report));
    }

    /** Single-object records (written without the registry) are not the reader's: it fails. */
    @Test
    void singleObjectRecordsAreUnreadable() throws Exception {
        String source = Snippets.get("spark-process-stats", swapstream.bootstrap(), swapstream.registry());
        Path src = dir.resolve("src").resolve("ReadSingleObject.java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, source.replace("\"etw.process-stats\"", "\"" + Topics.SINGLE_OBJECT_PREFIX + "process-stats\"")
                .replace("class ReadProcessStats", "class ReadSingleObject"));
        Class<?> reader = compileFile(src, "ReadSingleObject");
        Exception e = assertThrows(Exception.class, () -> ((Dataset<?>) reader.getMethod("read", SparkSession.class).invoke(null, spark)).collectAsList());
        Throwable root = e;
        while (root.getCause() != null) root = root.getCause();
        System.out.println("Spark, single-object records: " + root);
        assertTrue(String.valueOf(root.getMessage()).contains("the registry answered"), String.valueOf(root));
    }

    /**
     * A record of an earlier schema version (ThreadStats v1, as `swapstream schemas --register` registers it) beside one
     * of the current version: the reader gives the earlier one's later fields as null and its other fields as the
     * current one's; decoded with the subject's latest schema instead, the earlier one fails.
     */
    @Test
    @SuppressWarnings("unchecked")
    void anEarlierVersionReadsWithNullsAndNotWithTheLatestSchema() throws Exception {
        String prefix = "ev.";
        String topic = prefix + "thread-stats";
        swapstream.ok("schemas", "--register", swapstream.registry(), "--topic-prefix", prefix);
        String subject = topic + "-value";
        List<Object> versions = (List<Object>) Json.parse(swapstream.ccompat("/subjects/" + subject + "/versions"));
        assertTrue(versions.size() > 1, "ThreadStats has earlier versions: " + versions);
        Map<String, Object> first = Json.object(swapstream.ccompat("/subjects/" + subject + "/versions/" + versions.get(0)));
        Map<String, Object> latest = Json.object(swapstream.ccompat("/subjects/" + subject + "/versions/latest"));
        org.apache.avro.Schema v1 = new org.apache.avro.Schema.Parser().parse((String) first.get("schema"));

        // a record the pipeline wrote (the current version), and the same record written as version 1
        Row raw = spark.read().format("kafka").option("kafka.bootstrap.servers", swapstream.bootstrap()).option("subscribe", "etw.thread-stats")
                .option("kafka.isolation.level", "read_committed").load().where("value IS NOT NULL").select("value").limit(1).collectAsList().get(0);
        byte[] current = (byte[]) raw.get(0);
        int writerId = java.nio.ByteBuffer.wrap(current, 1, 4).getInt();
        org.apache.avro.Schema writer = new org.apache.avro.Schema.Parser().parse(
                (String) Json.object(swapstream.ccompat("/schemas/ids/" + writerId)).get("schema"));
        org.apache.avro.generic.GenericRecord asV1 = new org.apache.avro.generic.GenericDatumReader<org.apache.avro.generic.GenericRecord>(writer, v1)
                .read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(current, 5, current.length - 5, null));
        java.io.ByteArrayOutputStream framed = new java.io.ByteArrayOutputStream();
        framed.write(0);
        framed.write(java.nio.ByteBuffer.allocate(4).putInt(((Number) first.get("id")).intValue()).array());
        org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(framed, null);
        new org.apache.avro.generic.GenericDatumWriter<org.apache.avro.generic.GenericRecord>(v1).write(asV1, encoder);
        encoder.flush();
        byte[] earlier = framed.toByteArray();
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers", swapstream.bootstrap()))) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1))).all().get();
        }
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(Map.of("bootstrap.servers", swapstream.bootstrap()),
                new org.apache.kafka.common.serialization.ByteArraySerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, earlier)).get();
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, current)).get();
        }

        String source = Snippets.get("spark-process-stats", swapstream.bootstrap(), swapstream.registry());
        Path src = dir.resolve("src").resolve("ReadEarlier.java");
        Files.writeString(src, source.replace("\"etw.process-stats\"", "\"" + topic + "\"").replace("class ReadProcessStats", "class ReadEarlier"));
        Dataset<Row> rows = (Dataset<Row>) compileFile(src, "ReadEarlier").getMethod("read", SparkSession.class).invoke(null, spark);
        List<Map<String, Object>> got = new ArrayList<>();
        for (String json : rows.toJSON().collectAsList()) got.add((Map<String, Object>) Topics.canonical(Json.parse(json)));
        assertEquals(2, got.size());
        Topics.Versions read = Topics.Versions.of(got.get(0), got.get(1), field -> v1.getField(field) != null);
        List<String> later = read.later();
        assertFalse(later.isEmpty(), "the current record has fields version 1 lacks");
        assertEquals(read.expected(), read.older(), "the version 1 record: its fields as the current one's, the later ones null");

        // decoded with the subject's latest schema, the version 1 record fails
        Dataset<Row> withLatest = spark.read().format("kafka").option("kafka.bootstrap.servers", swapstream.bootstrap()).option("subscribe", topic)
                .option("kafka.isolation.level", "read_committed").load()
                .withColumn("body", org.apache.spark.sql.functions.expr("substring(value, 6, length(value) - 5)"))
                .select(org.apache.spark.sql.avro.functions.from_avro(org.apache.spark.sql.functions.col("body"), (String) latest.get("schema")).alias("r"));
        Exception e = assertThrows(Exception.class, withLatest::collectAsList);
        System.out.printf("Spark, ThreadStats version 1 beside the current: the reader gives %d fields null (%s), the others equal;"
                + " with the latest schema: %s%n", later.size(), String.join(", ", later), e.getMessage().lines().findFirst().orElse(""));
        assertTrue(e.getMessage().contains("Malformed records are detected in record parsing"), e.getMessage());
    }
}
