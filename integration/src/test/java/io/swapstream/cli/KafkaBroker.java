package io.swapstream.cli;

import io.swapstream.local.EmbeddedKafkaBroker;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One real Kafka broker for the whole test run, kept in the root store: $KAFKA_BOOTSTRAP when
 * set, Testcontainers Kafka with {@code -Dkafka.testcontainers=true} and a Docker engine, else the
 * in-JVM KRaft broker. Tests take it as a {@link Bootstrap} parameter.
 */
public final class KafkaBroker implements BeforeAllCallback, ParameterResolver {
    /** Where the test broker listens. */
    public record Bootstrap(String servers, String kind) {}

    private static final class Running implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final Bootstrap bootstrap;
        final AutoCloseable resource;

        Running(Bootstrap bootstrap, AutoCloseable resource) {
            this.bootstrap = bootstrap;
            this.resource = resource;
        }

        @Override
        public void close() throws Exception {
            if (resource != null) resource.close();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        running(context);
    }

    private static Running running(ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(Running.class, k -> start(), Running.class);
    }

    private static Running start() {
        String external = System.getenv("KAFKA_BOOTSTRAP");
        if (external != null && !external.isBlank()) return new Running(new Bootstrap(external, "external"), null);
        try {
            if (Boolean.getBoolean("kafka.testcontainers")) {
                var c = new org.testcontainers.kafka.KafkaContainer("apache/kafka:4.3.1");
                c.start();
                return new Running(new Bootstrap(c.getBootstrapServers(), "testcontainers"), c);
            }
            EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start();
            return new Running(new Bootstrap(b.bootstrapServers(), "in-jvm"), b);
        } catch (Exception e) {
            throw new IllegalStateException("no Kafka broker for the integration tests: " + e, e);
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == Bootstrap.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return running(e).bootstrap;
    }
}
