package io.swapstream.decode;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.etw.EtlReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Process and thread events of the real files decode to plausible values. */
class RealFileEventsTest {
    static Path testdata() {
        Path dir = Path.of(System.getProperty("swapstream.testdata", "../../shared/testdata/etl"));
        Assumptions.assumeTrue(Files.isDirectory(dir), "real ETL files absent at " + dir + ": skipping");
        return dir;
    }

    @Test
    void processAndThreadEvents() throws Exception {
        for (String name : List.of("airbus__ShutdownPerfDiagLogger.etl", "perfview__diaghub.kernel.1.etl",
                "perfview__net.4.5.2.x64.etl")) {
            List<ProcessEvent> processes = new ArrayList<>();
            List<ThreadEvent> threads = new ArrayList<>();
            try (EtlReader r = EtlReader.open(testdata().resolve(name))) {
                while (r.next()) {
                    r.walk(ev -> {
                        if (ev.hookId() < 0) return;
                        if (ProcessEvent.handles(ev.hookId())) processes.add(ProcessEvent.decode(ev));
                        else if (ThreadEvent.handles(ev.hookId())) threads.add(ThreadEvent.decode(ev));
                    });
                }
            }
            assertFalse(processes.isEmpty(), name);
            for (ProcessEvent p : processes) {
                assertTrue(p.imageFileName().matches("[\\x20-\\x7e]*"), name + ": " + p);
                assertTrue(p.processId() >= 0 && p.processId() % 4 == 0, name + ": " + p);
            }
            assertTrue(processes.stream().anyMatch(p -> p.imageFileName().toLowerCase().endsWith(".exe")), name);
            for (ThreadEvent t : threads) {
                assertTrue(t.threadId() % 4 == 0, name + ": " + t);
                if (!t.isName()) assertTrue(t.basePriority() >= -1 && t.basePriority() <= 31, name + ": " + t);
            }
            if (!threads.isEmpty()) {
                assertTrue(threads.stream().anyMatch(t -> t.basePriority() == 8 || t.basePriority() == 9), name);
            }
        }
    }
}
