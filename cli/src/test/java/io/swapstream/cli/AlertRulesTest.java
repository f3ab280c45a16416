package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules (dashboards/swapstream-alerts.yml) pass {@code promtool check rules}, and their unit
 * tests (dashboards/swapstream-alerts.test.yml: the host-side alerts fire when they should, not before) pass
 * {@code promtool test rules}. Where promtool is not installed (Debian's prometheus package has it), skipped.
 */
class AlertRulesTest {
    private static Path promtool() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "promtool");
            if (Files.isExecutable(p)) return p;
        }
        return null;
    }

    private static void run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(5, TimeUnit.MINUTES);
        assertEquals(0, p.exitValue(), String.join(" ", command) + "\n" + out);
    }

    @Test
    void theAlertRulesAreValidAndTheirTestsPass() throws Exception {
        Path promtool = promtool();
        Assumptions.assumeTrue(promtool != null, "promtool is not installed");
        Path dashboards = CliRunner.REPOSITORY.resolve("dashboards");
        run(dashboards, promtool.toString(), "check", "rules", "swapstream-alerts.yml");
        run(dashboards, promtool.toString(), "test", "rules", "swapstream-alerts.test.yml");
    }
}
