package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.cli.kafka.Denied;
import io.swapstream.local.BrokerSecurity;
import io.swapstream.local.EmbeddedKafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's users and settings, checked before anything starts. */
class BrokerSecurityTest {
    @TempDir Path dir;

    @Test
    void usersComeFromAFileAndTheOptionsAndTheSuperUserIsOneOfThem() throws Exception {
        Path file = Files.writeString(dir.resolve("users"), "# the admin\nadmin:a-secret\n\nweb01:w-secret\n");
        assertEquals(Map.of("admin", "a-secret", "web01", "w-secret"), BrokerSecurity.usersFile(file));
        CliRunner noSuper = CliRunner.run("broker", "--data-dir", dir.resolve("d").toString(), "--add-user", "web01:w");
        assertEquals(2, noSuper.exit(), noSuper.err());
        assertTrue(noSuper.err().contains("the super user admin has no password"), noSuper.err());
        CliRunner bad = CliRunner.run("broker", "--data-dir", dir.resolve("d").toString(), "--add-user", "admin:a,b");
        assertEquals(2, bad.exit(), bad.err());
        assertTrue(bad.err().contains("a password is not empty and holds no ','"), bad.err());
        assertEquals(2, CliRunner.run("broker", "--add-user", "nopassword").exit());
    }

    @Test
    void aUserAddedAtALaterStartCanConnect() throws Exception {
        Path data = dir.resolve("broker");
        BrokerSecurity first = new BrokerSecurity("admin", Map.of("admin", "a-secret"), 60_000);
        int port;
        try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(data, 0, false, first)) {
            port = Integer.parseInt(b.bootstrapServers().replaceAll(".*:", ""));
            assertTrue(clusterId(b, "web01", "w-secret") instanceof org.apache.kafka.common.errors.AuthenticationException);
        }
        BrokerSecurity later = new BrokerSecurity("admin", Map.of("admin", "a-secret", "web01", "w-secret"), 60_000);
        try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.start(data, port, false, later)) {
            assertTrue(clusterId(b, "web01", "w-secret") instanceof String, "web01 connects");
        }
    }

    /** The cluster's id as {@code user}, or what refused it. */
    static Object clusterId(EmbeddedKafkaBroker b, String user, String password) throws Exception {
        Map<String, Object> c = new java.util.HashMap<>(BrokerSecurity.clientConfig(user, password));
        c.put("bootstrap.servers", b.bootstrapServers());
        try (var admin = org.apache.kafka.clients.admin.Admin.create(c)) {
            return admin.describeCluster().clusterId().get(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void theClientListenerAuthenticatesAndTheAuthorizerAllowsNothingWithoutAnAcl() {
        BrokerSecurity s = new BrokerSecurity("admin", Map.of("admin", "a-secret"), 60_000);
        Properties p = new Properties();
        s.apply(p, 9092, 9094, 9093);
        assertEquals("SASL_PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9094", p.getProperty("advertised.listeners"));
        assertEquals("org.apache.kafka.metadata.authorizer.StandardAuthorizer", p.getProperty("authorizer.class.name"));
        assertEquals("false", p.getProperty("allow.everyone.if.no.acl.found"));
        assertEquals("User:admin;User:ANONYMOUS", p.getProperty("super.users"));
        assertEquals(java.util.List.of("--add-scram", "SCRAM-SHA-512=[name=admin,password=a-secret]"), s.formatArguments());
        assertEquals("User:admin", Denied.principal(s.clientConfig("admin")));
    }
}
