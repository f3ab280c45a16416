package io.swapstream.cli.kafka;

import io.swapstream.cli.kafka.RoleAcls.Role;
import io.swapstream.ingest.TopicSetup;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "topics", description = "Create every topic of the pipeline with its settings, once, as an admin: then no ingester or"
        + " stage needs the right to create topics. Topics that exist are kept as they are.")
public final class TopicsCommand implements Callable<Integer>, Denials {
    @Spec CommandSpec spec;
    @Mixin KafkaOptions kafka;

    @Option(names = "--create", required = true, description = "create the topics that do not exist")
    boolean create;

    @Override
    public Integer call() throws Exception {
        String bootstrap = kafka.connect();
        int partitions;
        try (Admin admin = Admin.create(kafka.admin(bootstrap))) {
            partitions = TopicSetup.ensure(admin, kafka.prefix, kafka.partitions, kafka.replication(admin));
        }
        spec.commandLine().getErr().printf("swapstream topics: %d topics under %s, %d partitions each, on %s%n",
                TopicSetup.topics().size(), kafka.prefix, partitions, bootstrap);
        return 0;
    }

    @Override
    public Denied denied() {
        return Denied.of(Role.ADMIN, kafka.clientConfig(), new RoleAcls.Scope(kafka.prefix, null, null, null));
    }
}
