package io.swapstream.cli.kafka;

import io.swapstream.cli.ArchiveCommand;
import io.swapstream.cli.Options;
import io.swapstream.cli.kafka.RoleAcls.Role;
import io.swapstream.local.UserInputException;
import io.swapstream.schemas.json.RecordJson;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "acls", description = "The Kafka ACLs one role of the pipeline needs, as kafka-acls.sh lines or JSON;"
        + " with --apply, created through the Admin API (with an admin's --client-config).")
public final class AclsCommand implements Callable<Integer>, Denials {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--role", required = true, paramLabel = "ROLE", description = "ingest, decode, aggregate, rollup, reader, export, archive or admin")
    String role;

    @Option(names = "--principal", required = true, paramLabel = "User:NAME", description = "who holds the rights, as the broker names it")
    String principal;

    @Option(names = "--application-id", defaultValue = "swapstream", description = "the stages' --application-id")
    String applicationId;

    @Option(names = "--host", paramLabel = "HOST", description = "ingest: the one host this principal publishes as (its --host or"
            + " machine name); default: every host")
    String host;

    @Option(names = "--group", paramLabel = "PREFIX", description = "reader: consumer groups it may use begin with this (Connect,"
            + " Flink); default: none (tail uses none). archive: its --group-id begins with this; default: "
            + ArchiveCommand.DEFAULT_GROUP + " (both of archive's defaults)")
    String group;

    @Option(names = "--format", defaultValue = "kafka-acls", paramLabel = "kafka-acls|json", description = "how the bindings print")
    String format;

    @Option(names = "--apply", description = "create the bindings on the broker (-b, and an admin's --client-config)")
    boolean apply;

    @Override
    public Integer call() throws Exception {
        Role r = role();
        if (!principal.matches("[A-Za-z]+:.+")) throw new UserInputException("--principal: '" + principal + "' is not TYPE:NAME, e.g. User:decode");
        if (!format.equals("kafka-acls") && !format.equals("json")) throw new UserInputException("--format: kafka-acls or json, not " + format);
        if (host != null) Options.checkedHost(host, "--host");
        kafka.validate(apply);
        List<AclBinding> bindings = RoleAcls.bindings(r, principal, new RoleAcls.Scope(kafka.prefix, applicationId, host, group));
        PrintWriter out = spec.commandLine().getOut();
        if (format.equals("json")) out.println(json(bindings));
        else kafkaAcls(bindings).forEach(out::println);
        out.flush();
        if (apply) {
            String bootstrap = kafka.connect();
            try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
                admin.createAcls(bindings).all().get();
            }
            spec.commandLine().getErr().printf("swapstream acls: %d bindings for %s as %s created on %s%n", bindings.size(), principal,
                    r.label(), bootstrap);
        }
        return 0;
    }

    private Role role() {
        try {
            return Role.valueOf(role.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new UserInputException("--role: ingest, decode, aggregate, rollup, reader, export, archive or admin, not '" + role + "'");
        }
    }

    @Override
    public Denied denied() {
        return Denied.of(Role.ADMIN, kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, applicationId, host, group));
    }

    /** One kafka-acls.sh line per resource, its operations together. */
    public static List<String> kafkaAcls(List<AclBinding> bindings) {
        Map<ResourcePattern, List<AclBinding>> byResource = new LinkedHashMap<>();
        for (AclBinding b : bindings) byResource.computeIfAbsent(b.pattern(), p -> new ArrayList<>()).add(b);
        List<String> lines = new ArrayList<>();
        byResource.forEach((p, bs) -> {
            StringBuilder l = new StringBuilder("kafka-acls.sh --bootstrap-server \"$KAFKA\" --command-config admin.properties --add")
                    .append(" --allow-principal ").append(bs.get(0).entry().principal());
            for (AclBinding b : bs) l.append(" --operation ").append(operation(b.entry().operation()));
            l.append(switch (p.resourceType()) {
                case TOPIC -> " --topic " + p.name();
                case GROUP -> " --group " + p.name();
                case TRANSACTIONAL_ID -> " --transactional-id " + p.name();
                case CLUSTER -> " --cluster";
                default -> throw new IllegalStateException("no kafka-acls.sh option for " + p.resourceType());
            });
            if (p.patternType() == PatternType.PREFIXED) l.append(" --resource-pattern-type prefixed");
            lines.add(l.toString());
        });
        return lines;
    }

    /** kafka-acls.sh's spelling of an operation: Read, DescribeConfigs. */
    private static String operation(AclOperation op) {
        StringBuilder s = new StringBuilder();
        for (String word : op.name().split("_")) s.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        return s.toString();
    }

    /** The bindings as a JSON array, one object each. */
    public static String json(List<AclBinding> bindings) {
        return RecordJson.toJson(g -> {
            g.writeStartArray();
            for (AclBinding b : bindings) {
                g.writeStartObject();
                g.writeStringField("principal", b.entry().principal());
                g.writeStringField("resourceType", b.pattern().resourceType().name());
                g.writeStringField("name", b.pattern().name());
                g.writeStringField("patternType", b.pattern().patternType().name());
                g.writeStringField("operation", b.entry().operation().name());
                g.writeStringField("permission", b.entry().permissionType().name());
                g.writeStringField("host", b.entry().host());
                g.writeEndObject();
            }
            g.writeEndArray();
        });
    }
}
