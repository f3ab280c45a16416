package io.swapstream.cli.kafka;

import io.swapstream.cli.kafka.RoleAcls.Role;
import io.swapstream.ingest.MissingTopicsException;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;

/**
 * A right Kafka refused, in one line naming the principal, the operation and the resource. Kafka's exceptions name the
 * resource (not always) but never the operation: that is what the role needs there, as {@link RoleAcls} lists it.
 */
public final class Denied {
    private static final Pattern JAAS_USER = Pattern.compile("username\\s*=\\s*\"([^\"]*)\"");

    private final String principal;
    private final Role role;
    private final RoleAcls.Scope scope;
    private final List<AclBinding> bindings;

    private Denied(String principal, Role role, RoleAcls.Scope scope) {
        this.principal = principal;
        this.role = role;
        this.scope = scope;
        this.bindings = RoleAcls.bindings(role, principal, scope);
    }

    /** For a client of {@code role} with {@code clientConfig} (its --client-config). */
    public static Denied of(Role role, Map<String, ?> clientConfig, RoleAcls.Scope scope) {
        return new Denied(principal(clientConfig), role, scope);
    }

    /**
     * The principal the broker sees, as far as the client's settings tell: a SASL user's name; a certificate's is
     * the broker's to map (ssl.principal.mapping.rules); without either, ANONYMOUS.
     */
    public static String principal(Map<String, ?> clientConfig) {
        Object jaas = clientConfig.get("sasl.jaas.config");
        if (jaas != null) {
            Matcher m = JAAS_USER.matcher(jaas.toString());
            if (m.find()) return "User:" + m.group(1);
        }
        Object protocol = clientConfig.get("security.protocol");
        if (protocol != null && protocol.toString().equalsIgnoreCase("SSL")) return "the principal of this client's certificate";
        return "User:ANONYMOUS";
    }

    /** The line for {@code e}, or null when it is no refusal. */
    public String line(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String what = what(c);
            if (what != null) return what;
        }
        return null;
    }

    private String what(Throwable c) {
        String hint = "; swapstream acls --role " + role.label() + " lists the rights it needs";
        if (c instanceof MissingTopicsException m) {
            return c.getMessage() + ": an admin creates them once with swapstream topics --create --topic-prefix " + scope.prefix()
                    + " -b HOST:PORT --client-config ADMIN.properties";
        }
        if (c instanceof AuthenticationException) {
            return "denied: Kafka refused the credential of " + principal + " (wrong, or revoked): " + c.getMessage();
        }
        if (c instanceof TopicAuthorizationException t && t.unauthorizedTopics().isEmpty()) {
            return "denied: " + principal + " may not use a topic (" + c.getMessage() + ")" + hint;
        }
        if (c instanceof TopicAuthorizationException t) {
            return "denied: " + principal + " may not " + t.unauthorizedTopics().stream()
                    .map(topic -> operations(topic) + " topic " + topic).collect(Collectors.joining(", ")) + hint;
        }
        if (c instanceof GroupAuthorizationException g) {
            return "denied: " + principal + " may not READ group " + g.groupId() + hint;
        }
        if (c instanceof TransactionalIdAuthorizationException) {
            String id = bindings.stream().filter(b -> b.pattern().resourceType() == org.apache.kafka.common.resource.ResourceType.TRANSACTIONAL_ID)
                    .map(b -> b.pattern().name() + "*").findFirst().orElse("(its transactional id)");
            return "denied: " + principal + " may not WRITE transactional id " + id + hint;
        }
        if (c instanceof ClusterAuthorizationException) {
            return "denied: " + principal + " may not act on the cluster (" + c.getMessage() + ")" + hint;
        }
        return null;
    }

    /** What the role does with {@code topic}: READ, WRITE, both, or (the admin) CREATE. */
    private String operations(String topic) {
        List<AclOperation> ops = RoleAcls.operationsOnTopic(bindings, topic);
        if (ops.isEmpty()) return "use";
        List<AclOperation> data = ops.stream().filter(op -> op == AclOperation.READ || op == AclOperation.WRITE).toList();
        if (data.isEmpty() && ops.contains(AclOperation.CREATE)) return AclOperation.CREATE.name(); // the admin's topics --create
        return (data.isEmpty() ? ops : data).stream().map(AclOperation::name).collect(Collectors.joining("/"));
    }
}
