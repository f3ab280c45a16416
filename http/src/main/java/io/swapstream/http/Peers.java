package io.swapstream.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.swapstream.schemas.SessionPartitioner;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsMetadata;

/**
 * The other instances of a stage's application, as Kafka Streams' metadata names them: which one holds a key,
 * and a query asked of one over HTTP(S), with the client's credentials passed on: over HTTPS, or to an instance on
 * this machine (a loopback address). Over plain HTTP to another machine a user's password would cross the network
 * in clear: such a question is refused (503), and the client can ask that instance itself.
 */
public final class Peers {
    private static final ObjectMapper JSON = RecordJson.MAPPER;
    private final KafkaStreams streams;
    private final String self;
    private final String scheme;
    private final HttpClient http;

    /** @param tls the stage's TLS settings (peers are asked over HTTPS, trusting its key store), or null */
    public Peers(KafkaStreams streams, String self, String scheme, HttpTls tls) {
        this.streams = streams;
        this.self = self;
        this.scheme = scheme;
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
        if (tls != null) b.sslContext(tls.client());
        this.http = b.build();
    }

    boolean isSelf(String host) {
        return self.equals(host);
    }

    /** The instance that holds {@code key} of {@code store} (partitioned as the topics are), as host:port. */
    String owner(String store, String key, String what) {
        if (streams == null) return self; // no application: this instance alone (a test's)
        KeyQueryMetadata m = streams.queryMetadataForKey(store, key, new SessionPartitioner<>());
        if (m == null || m.activeHost() == null || m.activeHost().port() < 0) {
            throw new StageHttp.HttpProblem(503, "no instance holds " + what + " right now (rebalancing): ask again");
        }
        return m.activeHost().host() + ":" + m.activeHost().port();
    }

    /** Every instance, this one included, as host:port. */
    List<String> all() {
        List<String> hosts = new ArrayList<>();
        if (streams == null) return List.of(self); // no application: this instance alone (a test's)
        Collection<StreamsMetadata> all = streams.metadataForAllStreamsClients();
        for (StreamsMetadata m : all) hosts.add(m.hostInfo().host() + ":" + m.hostInfo().port());
        if (!hosts.contains(self)) hosts.add(self);
        return hosts;
    }

    /** True when this is the only instance of the application: every row is here. */
    boolean alone() {
        List<String> all = all();
        return all.size() == 1 && isSelf(all.get(0));
    }

    /** Whether a user's credentials may go to {@code host}: over TLS, or without leaving this machine. */
    boolean mayForwardCredentials(String host) {
        if (scheme.equals("https")) return true;
        String name = host.substring(0, host.lastIndexOf(':'));
        if (name.startsWith("[") && name.endsWith("]")) name = name.substring(1, name.length() - 1);
        // literal loopback addresses and localhost only: another name is whatever the resolver says it is
        return name.equals("localhost") || name.startsWith("127.") || name.equals("::1") || name.equals("0:0:0:0:0:0:0:1");
    }

    /** Asks {@code host} for {@code path} with {@code q}; a 404 there is a 404 here, any other failure a 503. */
    ArrayNode ask(String host, String path, Map<String, String> q, String authorization) throws IOException, InterruptedException {
        if (authorization != null && !mayForwardCredentials(host)) {
            throw new StageHttp.HttpProblem(503, "part of the answer is on instance " + host + ", reached over plain HTTP: a user's"
                    + " password is not sent there in clear (serve --http-tls, or ask that instance itself)");
        }
        StringBuilder uri = new StringBuilder(scheme).append("://").append(host);
        // the path came decoded: a session id holds spaces
        for (String segment : path.substring(1).split("/", -1)) {
            uri.append('/').append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
        }
        uri.append('?');
        q.forEach((k, v) -> uri.append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                .append(URLEncoder.encode(v, StandardCharsets.UTF_8)).append('&'));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(uri.toString())).timeout(Duration.ofSeconds(10));
        if (authorization != null) request.header("Authorization", authorization);
        HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 404) throw new StageHttp.HttpProblem(404, JSON.readTree(r.body()).path("error").asText("not found"));
        if (r.statusCode() != 200) {
            throw new StageHttp.HttpProblem(503, "instance " + host + " answered " + r.statusCode() + ": " + r.body().strip());
        }
        var n = JSON.readTree(r.body());
        if (n.isArray()) return (ArrayNode) n;
        ArrayNode a = JSON.createArrayNode();
        a.add(n);
        return a;
    }
}
