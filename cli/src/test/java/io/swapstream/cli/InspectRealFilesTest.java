package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import java.util.ArrayList;
import java.util.List;

/** {@code inspect --format json} equals EXPECTED.json on every field it has, for every real file. */
class InspectRealFilesTest {

    static Path testdata() {
        Path dir = Path.of(System.getProperty("swapstream.testdata", "../../shared/testdata/etl"));
        Assumptions.assumeTrue(Files.isRegularFile(dir.resolve("EXPECTED.json")),
                "real ETL files absent at " + dir + ": skipping");
        return dir;
    }

    @TestFactory
    List<DynamicTest> everyRealFileMatchesExpected() throws Exception {
        Path dir = Path.of(System.getProperty("swapstream.testdata", "../../shared/testdata/etl"));
        if (!Files.isRegularFile(dir.resolve("EXPECTED.json"))) {
            // one visible skip rather than a silent zero
            return List.of(DynamicTest.dynamicTest("real ETL files", () -> testdata()));
        }
        ObjectMapper json = new ObjectMapper();
        JsonNode expected = json.readTree(dir.resolve("EXPECTED.json").toFile());
        List<DynamicTest> tests = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = expected.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            tests.add(DynamicTest.dynamicTest(e.getKey(), () -> {
                CliRunner r = CliRunner.run("inspect", "--format", "json", dir.resolve(e.getKey()).toString());
                assertEquals("", r.err());
                assertEquals(0, r.exit());
                JsonNode got = json.readTree(r.out());
                assertSubset(e.getKey(), e.getValue(), got);
            }));
        }
        return tests;
    }

    static void assertSubset(String path, JsonNode expected, JsonNode got) {
        if (expected.isObject()) {
            expected.fields().forEachRemaining(f -> assertSubset(path + "." + f.getKey(), f.getValue(), got.get(f.getKey())));
        } else {
            assertEquals(expected, got, path);
        }
    }
}
