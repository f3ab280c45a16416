package io.swapstream.schemas.serde;

import io.apicurio.registry.rest.client.RegistryClient;
import io.apicurio.registry.rest.client.RegistryClientFactory;
import io.apicurio.registry.rest.client.exception.ArtifactNotFoundException;
import io.apicurio.registry.rest.client.exception.RuleAlreadyExistsException;
import io.apicurio.registry.rest.client.exception.RestClientException;
import io.apicurio.registry.rest.v2.beans.ArtifactMetaData;
import io.apicurio.registry.rest.v2.beans.IfExists;
import io.apicurio.registry.rest.v2.beans.Rule;
import io.apicurio.registry.types.RuleType;
import io.apicurio.rest.client.auth.Auth;
import io.apicurio.rest.client.auth.BasicAuth;
import io.swapstream.schemas.SwapstreamConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;

/**
 * A schema registry, through Apicurio Registry's REST client: schemas registered under a subject
 * (the topic's value subject, {@code TOPIC-value}) with a BACKWARD compatibility rule, and schemas
 * found by id. Ids are content ids, the ids Confluent's API ({@code /apis/ccompat/v7}) and Confluent
 * wire-format readers use. Both answers are kept: a running stage asks the registry once per schema.
 */
public final class SchemaRegistry {
    /** One per registry and credentials in a JVM: every serde of every topology shares its ids. */
    private static final Map<String, SchemaRegistry> OPEN = new ConcurrentHashMap<>();

    /** Confluent's client property for user:password, honoured so its configuration files work unchanged. */
    public static final String BASIC_AUTH_USER_INFO = "basic.auth.user.info";
    /** Apicurio's own credentials properties. */
    public static final String USERNAME = "apicurio.auth.username";
    public static final String PASSWORD = "apicurio.auth.password";
    /** TLS and request headers go to Apicurio's client under its own keys ({@code apicurio.registry.request.*}). */
    private static final String CLIENT_PREFIX = "apicurio.registry.";

    /** The compatibility every subject this registers gets, unless an operator set another. */
    public static final String COMPATIBILITY = "BACKWARD";

    private final String url;
    private final RegistryClient client;
    /** Subject NUL fingerprint: the id registered. */
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemas = new ConcurrentHashMap<>();
    private final LongAdder requests = new LongAdder();

    private SchemaRegistry(String url, Map<String, Object> clientConfig, Auth auth) {
        this.url = url;
        this.client = RegistryClientFactory.create(url, clientConfig, auth);
    }

    /** The registry of a configuration's {@value SwapstreamConfig#SCHEMA_REGISTRY_URL}, or null without one. */
    public static SchemaRegistry of(Map<String, ?> config) {
        Object u = config.get(SwapstreamConfig.SCHEMA_REGISTRY_URL);
        if (u == null || u.toString().isBlank()) return null;
        String url = root(u.toString().trim());
        Map<String, Object> clientConfig = new TreeMap<>();
        config.forEach((k, v) -> {
            if (k.startsWith(CLIENT_PREFIX) && v != null) clientConfig.put(k, v.toString());
        });
        String user = string(config, USERNAME);
        String password = string(config, PASSWORD);
        String info = string(config, BASIC_AUTH_USER_INFO);
        if (user == null && info != null) {
            int colon = info.indexOf(':');
            if (colon < 0) throw new SchemaRegistryException(BASIC_AUTH_USER_INFO + " must be USER:PASSWORD");
            user = info.substring(0, colon);
            password = info.substring(colon + 1);
        }
        String key = url + '\0' + clientConfig + '\0' + user + '\0' + password;
        String u2 = user;
        String p2 = password;
        return OPEN.computeIfAbsent(key, k -> new SchemaRegistry(url, new HashMap<>(clientConfig),
                u2 == null ? null : new BasicAuth(u2, p2 == null ? "" : p2)));
    }

    private static String string(Map<String, ?> config, String key) {
        Object v = config.get(key);
        return v == null || v.toString().isEmpty() ? null : v.toString();
    }

    /** The registry's root: a URL given with Apicurio's or Confluent's API path works the same. */
    static String root(String url) {
        String u = url;
        while (u.endsWith("/")) u = u.substring(0, u.length() - 1);
        for (String api : new String[] {"/apis/registry/v2", "/apis/ccompat/v7", "/apis/ccompat/v6"}) {
            if (u.endsWith(api)) return u.substring(0, u.length() - api.length());
        }
        return u;
    }

    public String url() {
        return url;
    }

    /** The value subject of a topic (Confluent's TopicNameStrategy). */
    public static String subject(String topic) {
        return topic + "-value";
    }

    /** Requests sent to the registry since this JVM started: none in a running stage's steady state. */
    public long requests() {
        return requests.sum();
    }

    /**
     * The id of {@code schema} under {@code subject}, registered if it is not there. A new subject gets a
     * BACKWARD compatibility rule first, so every later version is checked against it; a refusal is
     * a {@link SchemaRegistryException} saying why.
     */
    public int register(String subject, Schema schema) {
        String key = subject + '\0' + SchemaNormalization.parsingFingerprint64(schema);
        Integer id = ids.get(key);
        if (id != null) return id;
        synchronized (this) {
            id = ids.get(key);
            if (id != null) return id;
            int registered = call("register " + schema.getName() + " under " + subject, () -> {
                ArtifactMetaData m;
                if (hasArtifact(subject)) {
                    ensureRule(subject);
                    m = create(subject, schema);
                } else {
                    m = create(subject, schema);
                    ensureRule(subject);
                }
                return contentId(m.getContentId());
            });
            schemas.putIfAbsent(registered, schema);
            ids.put(key, registered);
            return registered;
        }
    }

    /** The prefix of {@code topic}'s values in Confluent's wire format: the id of {@code schema} under its value subject. */
    public byte[] prefix(String topic, Schema schema) {
        return RegistryFraming.prefix(register(subject(topic), schema));
    }

    /** The id of {@code schema} if {@code subject} has it as a version, else null. */
    public Integer find(String subject, Schema schema) {
        return call("look up " + schema.getName() + " under " + subject, () -> {
            try {
                requests.increment();
                return contentId(client.getArtifactVersionMetaDataByContent(null, subject, true,
                        new ByteArrayInputStream(schema.toString().getBytes(StandardCharsets.UTF_8))).getContentId());
            } catch (io.apicurio.registry.rest.client.exception.NotFoundException e) {
                return null;
            }
        });
    }

    private boolean hasArtifact(String subject) {
        try {
            requests.increment();
            client.getArtifactMetaData(null, subject);
            return true;
        } catch (ArtifactNotFoundException e) {
            return false;
        }
    }

    private ArtifactMetaData create(String subject, Schema schema) {
        requests.increment();
        // canonical: a version with the same schema, however its JSON is spaced, is found rather than added
        return client.createArtifact(null, subject, null, "AVRO", IfExists.RETURN_OR_UPDATE, true,
                new ByteArrayInputStream(schema.toString().getBytes(StandardCharsets.UTF_8)));
    }

    private void ensureRule(String subject) {
        requests.increment();
        if (client.listArtifactRules(null, subject).contains(RuleType.COMPATIBILITY)) return;
        Rule rule = new Rule();
        rule.setType(RuleType.COMPATIBILITY);
        rule.setConfig(COMPATIBILITY);
        try {
            requests.increment();
            client.createArtifactRule(null, subject, rule);
        } catch (RuleAlreadyExistsException e) {
            // another instance added it first
        }
    }

    private static int contentId(Long id) {
        if (id == null || id < 0 || id > Integer.MAX_VALUE) throw new SchemaRegistryException("the registry gave content id " + id
                + ", which does not fit the 4 bytes of Confluent's wire format");
        return id.intValue();
    }

    /**
     * Registers the current schema of every Avro topic under {@code prefix}: a stage does so before it
     * starts, so that a refusal stops it before it writes anything.
     */
    public void registerTopics(String prefix) {
        io.swapstream.schemas.RecordTopics.VALUE_TYPES.forEach((suffix, type) ->
                register(subject(SwapstreamConfig.topic(prefix, suffix)), org.apache.avro.specific.SpecificData.get().getSchema(type)));
    }

    /** The schema of an id, as a reader finds it in a record. */
    public Schema schema(int id) {
        Schema s = schemas.get(id);
        if (s != null) return s;
        return schemas.computeIfAbsent(id, i -> call("read schema id " + i, () -> {
            requests.increment();
            try (InputStream in = client.getContentById(i)) {
                return new Schema.Parser().parse(in);
            } catch (IOException e) {
                throw new SchemaRegistryException("schema registry " + url + ": schema id " + i + " cannot be read: " + e.getMessage());
            }
        }));
    }

    private <T> T call(String what, java.util.function.Supplier<T> request) {
        try {
            return request.get();
        } catch (SchemaRegistryException e) {
            throw e;
        } catch (RestClientException e) {
            var error = e.getError();
            if (error == null || error.getErrorCode() == null || error.getErrorCode() == 0) {
                // no answer: the client reports its transport's failure as an error without a status
                String why = error == null ? e.getMessage() : error.getMessage() != null ? error.getMessage() : error.getName();
                throw new SchemaRegistryException("schema registry " + url + " cannot be reached to " + what + ": " + brief(String.valueOf(why)));
            }
            String message = error.getMessage() == null ? String.valueOf(e.getMessage()) : error.getMessage();
            throw new SchemaRegistryException("schema registry " + url + " refused to " + what + ": " + brief(message));
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) root = root.getCause();
            if (root instanceof io.apicurio.rest.client.auth.exception.AuthException || root instanceof io.apicurio.rest.client.auth.exception.ForbiddenException
                    || root instanceof io.apicurio.rest.client.auth.exception.NotAuthorizedException) {
                throw new SchemaRegistryException("schema registry " + url + " refused the credentials to " + what + ": "
                        + brief(String.valueOf(root.getMessage())));
            }
            throw new SchemaRegistryException("schema registry " + url + ": cannot " + what + ": "
                    + firstLine(root.getMessage() == null ? root.getClass().getSimpleName() : root.getClass().getSimpleName() + ": " + root.getMessage()));
        }
    }

    /** A refusal's reason, without the repeated list of causes Apicurio appends, and at most a line's worth. */
    static String brief(String message) {
        String m = firstLine(message);
        int causes = m.indexOf(" Causes:");
        if (causes > 0) m = m.substring(0, causes);
        return m.length() <= 240 ? m : m.substring(0, 240) + "...";
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
