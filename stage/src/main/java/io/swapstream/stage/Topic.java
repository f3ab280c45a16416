package io.swapstream.stage;

import io.swapstream.schemas.SessionPartitioner;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A topic with its value serde (keys are strings on every topic of the pipeline), so that what a stage
 * reads and writes cannot mix a topic up with another's serde.
 *
 * @param bySession written partitioned by session, as every topic of a session ({@link SessionPartitioner})
 */
public record Topic<V>(String name, Serde<V> valueSerde, boolean bySession) {
    public static <V> Topic<V> of(String name, Serde<V> valueSerde) {
        return new Topic<>(name, valueSerde, true);
    }

    public Consumed<String, V> consumed() {
        return Consumed.with(Serdes.String(), valueSerde);
    }

    public Produced<String, V> produced() {
        Produced<String, V> p = Produced.with(Serdes.String(), valueSerde);
        return bySession ? p.withStreamPartitioner(new SessionPartitioner<>()) : p;
    }

    /**
     * Adds this topic's sink, named {@code sinkName}, under {@code stream}'s processor: one that forwards
     * several kinds of value, each to its own sink by name, the way the Processor API routes to named
     * children. Only values of this topic's type may be forwarded to it.
     */
    @SuppressWarnings("unchecked")
    public <T> void sinkOf(KStream<String, T> stream, String sinkName) {
        stream.to(name, (Produced<String, T>) (Produced<String, ?>) produced().withName(sinkName));
    }
}
