package io.swapstream.ingest;

import io.swapstream.schemas.RecoveryBudget;
import io.swapstream.schemas.SwapstreamConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The watcher's transactions: its producer (one transactional id per watched directory, so a restarted
 * watcher fences the old one), the positions its commits made, and what it does when a transaction
 * fails: abort, or replace the producer, and read the committed positions again.
 */
final class WatchTransactions implements AutoCloseable {
    /** Fencings survived lately: a watcher fenced again and again has a twin, and stops. */
    static final int MAX_FENCINGS = 3;

    private final DirectoryIngest.Settings settings;
    private final Consumer<String> log;
    private final String positionsTopic;
    private final RecoveryBudget fencings = new RecoveryBudget(MAX_FENCINGS, 10 * 60_000L);
    private final Clients clients;
    private Producer<String, byte[]> producer;
    /** Committed positions by session. */
    private final Map<String, IngestPosition> committed;
    private boolean open;
    /** The last transaction failed: abort it before anything else. */
    private boolean aborting;

    /**
     * What the watcher asks of Kafka besides its transactions: {@link #kafka} the real clients, a unit test a fake
     * (a {@code MockProducer}, positions it keeps).
     */
    interface Clients {
        /** A new producer of the watcher's transactional id, its transactions initialized (fencing an older one). */
        Producer<String, byte[]> newProducer();

        /** The committed positions of {@code topic}, by session. */
        Map<String, IngestPosition> readCommitted(String topic);

        /** Throws Kafka's refusal when it no longer takes the watcher's credential. */
        void checkCredential();
    }

    /** The real clients of {@code settings}' brokers. */
    static Clients kafka(DirectoryIngest.Settings settings) {
        return new Clients() {
            @Override public Producer<String, byte[]> newProducer() { return WatchTransactions.newProducer(settings); }
            @Override public Map<String, IngestPosition> readCommitted(String topic) {
                return IngestPosition.readCommitted(settings.bootstrap(), topic, settings.overrides());
            }
            @Override public void checkCredential() { WatchTransactions.checkCredential(settings); }
        };
    }

    WatchTransactions(DirectoryIngest.Settings settings, Consumer<String> log) {
        this(settings, log, kafka(settings));
    }

    WatchTransactions(DirectoryIngest.Settings settings, Consumer<String> log, Clients clients) {
        this.settings = settings;
        this.log = log;
        this.clients = clients;
        this.positionsTopic = SwapstreamConfig.topic(settings.prefix(), SwapstreamConfig.INGEST_POSITIONS);
        this.committed = clients.readCommitted(positionsTopic);
        this.producer = clients.newProducer();
    }

    private static KafkaProducer<String, byte[]> newProducer(DirectoryIngest.Settings settings) {
        Map<String, Object> c = new HashMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalId());
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, SwapstreamConfig.MAX_MESSAGE_BYTES);
        c.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, BufferPublisher.COMPRESSION);
        c.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "swapstream-ingest-watch");
        c.putAll(settings.overrides());
        KafkaProducer<String, byte[]> p = new KafkaProducer<>(c, new StringSerializer(), new ByteArraySerializer());
        try {
            p.initTransactions();
        } catch (RuntimeException e) {
            p.close(Duration.ZERO);
            throw e;
        }
        return p;
    }

    /**
     * Throws Kafka's refusal when it no longer takes this watcher's credential (deleted or changed). A producer whose
     * credential is refused tries again for ever in its network thread, and its commit only times out: a fresh
     * client's first request says at once what is wrong.
     */
    void checkCredential() {
        clients.checkCredential();
    }

    private static void checkCredential(DirectoryIngest.Settings settings) {
        Map<String, Object> c = new HashMap<>(settings.overrides());
        c.keySet().retainAll(AdminClientConfig.configNames()); // the producer's settings are none of an admin's
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        try (Admin admin = Admin.create(c)) {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs(15_000)).clusterId().get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AuthenticationException refused) throw refused;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The session's committed position, or null. */
    IngestPosition committed(String session) {
        return committed.get(session);
    }

    /** Ready for a new transaction: after a failed one, once it is aborted (or the producer replaced); false while Kafka does not answer. */
    boolean ready() {
        return !aborting || recover();
    }

    /** Sends {@code record} in the open transaction, opening one first. */
    void send(ProducerRecord<String, byte[]> record) {
        if (!open) {
            producer.beginTransaction();
            open = true;
        }
        producer.send(record);
    }

    boolean isOpen() {
        return open;
    }

    /** Commits the open transaction with the positions of the sessions it moved: they commit or abort together. */
    void commit(Map<String, IngestPosition> moved) {
        Map<String, IngestPosition> positions = new HashMap<>();
        for (Map.Entry<String, IngestPosition> e : moved.entrySet()) {
            byte[] b = e.getValue().encode();
            send(new ProducerRecord<>(positionsTopic, e.getKey(), b));
            positions.put(e.getKey(), IngestPosition.decode(b));
        }
        if (open) producer.commitTransaction();
        open = false;
        // known committed only once they are: an aborted transaction resumes from the ones before
        committed.putAll(positions);
    }

    /** The open transaction failed (abortable): it is aborted before the next. */
    void failed() {
        aborting = true;
        open = false;
    }

    /**
     * Another watcher took over, or the coordinator bumped the epoch (a broker restart, a transaction timed out;
     * under transaction.version 2 a fenced producer's next send is refused for its old epoch): a new producer
     * takes over a few times (fencing the other, if any), then it is fatal.
     */
    void fenced(KafkaException e, long nowMs) {
        if (!fencings.spend(nowMs)) {
            ProducerFencedException fenced = new ProducerFencedException("fenced " + MAX_FENCINGS + " times in 10 minutes, last: "
                    + e.getMessage() + " (another watcher of this directory?)");
            fenced.initCause(e);
            throw fenced;
        }
        log.accept("Kafka: " + e.getMessage() + "; a new producer takes over from the last committed positions");
        producer.close(Duration.ZERO);
        producer = null;
        failed();
    }

    /**
     * After a failed transaction: aborts it, or when the producer cannot go on, replaces it (same
     * transactional id, so Kafka aborts what the old one left open), and reads the committed positions
     * again (a commit that timed out may have gone through). False while Kafka does not answer.
     */
    private boolean recover() {
        try {
            if (producer != null) {
                try {
                    producer.abortTransaction();
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    throw e;
                } catch (KafkaException e) {
                    producer.close(Duration.ZERO);
                    producer = null;
                }
            }
            if (producer == null) producer = clients.newProducer();
            committed.clear();
            committed.putAll(clients.readCommitted(positionsTopic));
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            checkCredential();
            log.accept("Kafka does not answer (" + e.getMessage() + "); trying again");
            return false;
        }
        aborting = false;
        return true;
    }

    @Override
    public void close() {
        if (producer != null) producer.close(Duration.ofSeconds(10));
    }
}
