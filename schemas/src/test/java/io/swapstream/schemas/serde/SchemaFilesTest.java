package io.swapstream.schemas.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.schemas.avro.ContextSwitchBatch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;

/** Every .avsc in the repository, the current ones and the history, loads by itself with Avro's parser. */
class SchemaFilesTest {
    @Test
    void everySchemaFileLoadsAlone() throws IOException {
        List<Path> files;
        try (Stream<Path> current = Files.list(Path.of("src/main/avro"));
             Stream<Path> history = Files.list(Path.of("src/main/resources/io/swapstream/schemas/avro-history"))) {
            files = Stream.concat(current, history).filter(p -> p.toString().endsWith(".avsc")).toList();
        }
        assertTrue(files.size() >= 10, files.toString());
        for (Path f : files) {
            Schema s = new Schema.Parser().parse(f.toFile()); // a fresh parser: no type from another file
            assertTrue(s.getFullName().startsWith("io.swapstream.schemas.avro."), f.toString());
        }
        // the batch's file holds ThreadInfo itself: the same schema, byte for byte in canonical form, as the generated class
        Schema batch = new Schema.Parser().parse(Path.of("src/main/avro/ContextSwitchBatch.avsc").toFile());
        assertEquals(SchemaNormalization.parsingFingerprint64(ContextSwitchBatch.getClassSchema()), SchemaNormalization.parsingFingerprint64(batch));
    }
}
