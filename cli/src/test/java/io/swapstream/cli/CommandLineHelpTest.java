package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** Every subcommand answers --help, -h and 'help SUB' with its usage; every option is described with its default. */
class CommandLineHelpTest {
    static List<String> subcommands() {
        List<String> names = new ArrayList<>(Swapstream.commandLine().getSubcommands().keySet());
        names.remove("help");
        return names;
    }

    @TestFactory
    Stream<DynamicTest> helpOfEverySubcommand() {
        return subcommands().stream().map(sub -> DynamicTest.dynamicTest(sub, () -> {
            for (String[] args : List.of(new String[] {sub, "--help"}, new String[] {sub, "-h"}, new String[] {"help", sub})) {
                CliRunner r = CliRunner.run(args);
                assertEquals(0, r.exit(), String.join(" ", args) + ": " + r.err());
                assertTrue(r.out().startsWith("Usage: swapstream " + sub), r.out());
                assertEquals("", r.err());
            }
            String usage = CliRunner.run(sub, "--help").out();
            CommandLine cl = Swapstream.commandLine().getSubcommands().get(sub);
            for (OptionSpec o : cl.getCommandSpec().options()) {
                if (o.usageHelp() || o.versionHelp()) continue;
                String d = String.join(" ", o.description()).strip();
                assertFalse(d.isEmpty(), sub + " " + o.longestName() + " has no description");
                if (o.defaultValue() != null) {
                    assertTrue(usage.contains("Default: " + o.defaultValue()), sub + " " + o.longestName() + " shows no default:\n" + usage);
                }
            }
            // a stage's --help gives its own HTTP address
            String own = switch (sub) {
                case "decode" -> "127.0.0.1:8081";
                case "aggregate" -> "127.0.0.1:8080";
                case "rollup" -> "127.0.0.1:8082";
                default -> null;
            };
            if (own != null) {
                String http = usage.substring(usage.indexOf("\n      --http=HOST:PORT"), usage.indexOf("\n      --http-advertised"));
                assertTrue(http.replaceAll("\\s+", " ").contains("Default: " + own), sub + ": " + http);
                for (String other : List.of("127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082")) {
                    if (!other.equals(own)) assertFalse(http.contains(other), sub + " --help names another stage's address: " + http);
                }
            }
            // tail names every topic it takes
            if (sub.equals("tail")) {
                String described = usage.replaceAll("\\s+", " ");
                for (String topic : TailCommand.TOPICS) {
                    assertTrue(described.contains(" " + topic + ",") || described.contains(" " + topic + " "), "tail --help names " + topic + ":\n" + usage);
                }
            }
            // an option's label is never split over two lines of the synopsis ("-o=FILE." then "etl")
            for (String line : usage.lines().toList()) {
                assertFalse(line.matches(".*=[A-Z]+\\.$"), sub + " --help breaks a label: " + line);
            }
            for (var p : cl.getCommandSpec().positionalParameters()) {
                assertFalse(String.join(" ", p.description()).isBlank(), sub + " " + p.paramLabel() + " has no description");
            }
        }));
    }
}
