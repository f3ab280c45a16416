package io.swapstream.ingest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka of a watcher's unit tests: each producer a {@link MockProducer}, and the topics as what those producers
 * committed left them, in the order they were made (a read_committed consumer's view). No broker.
 */
final class FakeKafka implements WatchTransactions.Clients {
    final List<MockProducer<String, byte[]>> producers = new ArrayList<>();
    int credentialChecks;
    int positionReads;
    /** Thrown by the next credential checks, when set: Kafka refuses the watcher's credential. */
    RuntimeException credentialRefused;

    @Override
    public Producer<String, byte[]> newProducer() {
        MockProducer<String, byte[]> p = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
        p.initTransactions();
        producers.add(p);
        return p;
    }

    @Override
    public Map<String, IngestPosition> readCommitted(String topic) {
        positionReads++;
        Map<String, IngestPosition> out = new HashMap<>();
        for (ProducerRecord<String, byte[]> r : committed(topic)) out.put(r.key(), IngestPosition.decode(r.value()));
        return out;
    }

    @Override
    public void checkCredential() {
        credentialChecks++;
        if (credentialRefused != null) throw credentialRefused;
    }

    /** The producer made last. */
    MockProducer<String, byte[]> producer() {
        return producers.get(producers.size() - 1);
    }

    /** Every record committed, in order. */
    List<ProducerRecord<String, byte[]>> committed() {
        List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
        for (MockProducer<String, byte[]> p : producers) out.addAll(p.history());
        return out;
    }

    /** The records committed to {@code topic}, in order. */
    List<ProducerRecord<String, byte[]>> committed(String topic) {
        return committed().stream().filter(r -> r.topic().equals(topic)).toList();
    }

    /** Transactions committed by all producers. */
    long commits() {
        return producers.stream().mapToLong(MockProducer::commitCount).sum();
    }

    /** The value of header {@code name} of {@code r}, or null. */
    static String header(ProducerRecord<String, byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
