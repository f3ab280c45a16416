package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.state.StateFormat;
import org.junit.jupiter.api.Test;

/** State of a release this build does not read is one line saying what it is and what to do, never "internal error". */
class StateRefusalTest {
    @Test
    void aPositionOfAnUnknownReleaseIsOneLine() {
        byte[] newer = new StateFormat("ingest position", 9).write(o -> o.string("C:\\traces\\a.etl").writeLong(3));
        RuntimeException e = assertThrows(RuntimeException.class, () -> new StateFormat("ingest position", 4).read(newer, in -> in.string()));
        // as an ingester meets it, wrapped by whatever read it
        String line = Swapstream.userMessage(new java.util.concurrent.ExecutionException(new IllegalStateException("reading positions", e)));
        assertTrue(line.startsWith("ingest position state is version 9, and this build reads version 4 only"), line);
        assertTrue(line.contains("docs/upgrading.md") && !line.contains("internal error"), line);
        assertFalse(line.contains("\n"), line);
        assertEquals(Swapstream.EXIT_FAILURE, Swapstream.exitCode(e));
    }
}
