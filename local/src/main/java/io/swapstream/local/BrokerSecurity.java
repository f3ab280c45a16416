package io.swapstream.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;

/**
 * A broker that checks who a client is and what it may do (docs/operations.md "Security"): SASL/SCRAM-SHA-512 on the
 * client listener, KRaft's StandardAuthorizer, nothing allowed without an ACL but to the super user. The controller
 * and inter-broker listeners stay PLAINTEXT on 127.0.0.1, their principal (ANONYMOUS) a super user: whoever can reach
 * those ports on this machine is an admin.
 */
public record BrokerSecurity(String superUser, Map<String, String> users, long reauthMs) {
    public static final String MECHANISM = "SCRAM-SHA-512";
    static final String CLIENT_LISTENER = "SASL_PLAINTEXT";
    static final String INTERNAL_LISTENER = "INTERNAL";
    /**
     * A client authenticates again this often on a connection it keeps: a deleted credential stops its holder within
     * this long, not at its next connection, which may be weeks away (KIP-368).
     */
    public static final long DEFAULT_REAUTH_MS = 60_000;

    public BrokerSecurity {
        users = Map.copyOf(users);
        if (!users.containsKey(superUser)) throw new UserInputException("the super user " + superUser + " has no password: add it as a user");
        users.forEach(BrokerSecurity::check);
    }

    /** {@code NAME:PASSWORD} parsed and checked. */
    public static Map.Entry<String, String> user(String nameColonPassword, String where) {
        int colon = nameColonPassword.indexOf(':');
        if (colon < 1) throw new UserInputException(where + ": '" + nameColonPassword.replaceAll(":.*", ":...") + "' is not NAME:PASSWORD");
        return Map.entry(nameColonPassword.substring(0, colon), nameColonPassword.substring(colon + 1));
    }

    /** A file of {@code NAME:PASSWORD} lines; blank lines and '#' comments are skipped. */
    public static Map<String, String> usersFile(Path file) {
        Map<String, String> users = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(file)) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) continue;
                Map.Entry<String, String> u = user(l, file.toString());
                users.put(u.getKey(), u.getValue());
            }
        } catch (IOException e) {
            throw new UserInputException("--users: " + file + " cannot be read: " + e.getMessage());
        }
        return users;
    }

    /** Kafka's storage tool and JAAS take the names and passwords between delimiters that they may not hold. */
    private static void check(String name, String password) {
        if (!name.matches("[A-Za-z0-9._@-]+")) throw new UserInputException("user '" + name + "': a name holds letters, digits, '.', '_', '@' and '-'");
        if (password.isEmpty() || password.matches(".*[,\\[\\]\"\\\\=\\s].*")) {
            throw new UserInputException("user " + name + ": a password is not empty and holds no ',', '[', ']', '=', '\"', '\\' or space");
        }
    }

    /** The broker settings, beside a node's own ({@link EmbeddedKafkaBroker#nodeProperties}). */
    public void apply(Properties p, int port, int internalPort, int controllerPort) {
        p.put("listeners", CLIENT_LISTENER + "://127.0.0.1:" + port + "," + INTERNAL_LISTENER + "://127.0.0.1:" + internalPort
                + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", CLIENT_LISTENER + "://127.0.0.1:" + port + "," + INTERNAL_LISTENER + "://127.0.0.1:" + internalPort);
        p.put("listener.security.protocol.map", CLIENT_LISTENER + ":SASL_PLAINTEXT," + INTERNAL_LISTENER + ":PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("inter.broker.listener.name", INTERNAL_LISTENER);
        p.put("sasl.enabled.mechanisms", MECHANISM);
        p.put("listener.name." + CLIENT_LISTENER.toLowerCase() + "." + MECHANISM.toLowerCase() + ".sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        p.put("allow.everyone.if.no.acl.found", "false");
        p.put("super.users", "User:" + superUser + ";User:ANONYMOUS");
        p.put("connections.max.reauth.ms", String.valueOf(reauthMs));
    }

    /** The storage tool's arguments that give every user a credential before the first start. */
    public List<String> formatArguments() {
        List<String> a = new ArrayList<>();
        users.forEach((name, password) -> {
            a.add("--add-scram");
            a.add(MECHANISM + "=[name=" + name + ",password=" + password + "]");
        });
        return a;
    }

    /** Gives every user its password, through the super user: users added on a later start. */
    void upsertUsers(String bootstrap) throws Exception {
        Map<String, Object> c = new HashMap<>(clientConfig(superUser));
        c.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(c)) {
            admin.alterUserScramCredentials(users.entrySet().stream()
                    .<org.apache.kafka.clients.admin.UserScramCredentialAlteration>map(u -> new UserScramCredentialUpsertion(u.getKey(),
                            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), u.getValue()))
                    .toList()).all().get();
        }
    }

    /** A client's settings as {@code user}: what its --client-config file holds. */
    public Map<String, String> clientConfig(String user) {
        return clientConfig(user, users.get(user));
    }

    public static Map<String, String> clientConfig(String user, String password) {
        return Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", MECHANISM, "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\"" + password + "\";");
    }
}
