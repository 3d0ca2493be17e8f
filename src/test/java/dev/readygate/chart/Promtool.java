package dev.readygate.chart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus's {@code promtool} (Debian's {@code prometheus} package; {@code .ci/run} installs it), run on files or
 * on standard input.
 */
public final class Promtool {

    /** What promtool said: its exit status and its output (standard output and error together). */
    public record Result(int exitCode, String output) {}

    private Promtool() {}

    public static Result run(String stdin, String... arguments) {
        List<String> command = new ArrayList<>();
        command.add("promtool");
        command.addAll(List.of(arguments));
        try {
            Path output = Files.createTempFile("promtool", ".out");
            try {
                Process process = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(output.toFile())
                        .start();
                try (var in = process.getOutputStream()) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError("promtool did not finish within 60 s: " + command);
                }
                return new Result(process.exitValue(), Files.readString(output));
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(
                    "cannot run promtool (Debian: apt-get install prometheus; .ci/run installs it)", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
