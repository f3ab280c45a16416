package io.swapstream.cli;

import io.swapstream.batch.SwitchRow;
import io.swapstream.batch.SwitchRowFormat;
import io.swapstream.decode.SessionDecoder;
import io.swapstream.schemas.json.RecordJson;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import com.fasterxml.jackson.core.JsonGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "switches", description = "Expanded ContextSwitch rows of a .etl file as JSON lines or CSV (no Kafka).")
final class SwitchesCommand implements Callable<Integer> {
    enum Format { jsonl, csv }

    @Spec CommandSpec spec;

    @Parameters(paramLabel = "FILE.etl", description = "the trace") Path file;

    @Option(names = "--format", defaultValue = "jsonl", paramLabel = "FORMAT", description = "${COMPLETION-CANDIDATES}") Format format;

    @Option(names = "--host", paramLabel = "HOST", description = "host the trace came from; default: the file name without extension") String host;

    @Option(names = "--max-wait-reason", paramLabel = "N", description = "override MaximumWaitReason (e.g. 0x28); default: by the trace's OS build")
    String maxWaitReason;

    @Override
    public Integer call() throws Exception {
        Integer override = Options.maxWaitReason(maxWaitReason);
        Options.traceFiles(java.util.List.of(file));
        PrintWriter out = spec.commandLine().getOut();
        // buffered separately: millions of rows go through here
        StringBuilder line = new StringBuilder(512);
        JsonGenerator json = RecordJson.generator(out);
        Consumer<SwitchRow> sink = format == Format.csv
                ? s -> { line.setLength(0); SwitchRowFormat.csv(line, s); out.append(line).append('\n'); }
                : s -> {
                    try {
                        SwitchRowFormat.json(json, s);
                        json.writeRaw('\n');
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                };
        if (format == Format.csv) out.println(String.join(",", SwitchRow.FIELDS));
        SessionDecoder d = SessionDecoder.decodeFile(file, Options.host(host, file), override, sink, null);
        json.flush();
        out.flush();
        return Options.reportExpansion(spec, file, d.counters());
    }
}
