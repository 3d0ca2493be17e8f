package dev.readygate.chart;

import dev.readygate.ExternalTool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus's {@code promtool} ({@link ExternalTool#PROMTOOL}: {@code -Dreadygate-test.promtool} or the PATH; Debian's
 * {@code prometheus} package, which {@code ./run-tests} installs), run on files or on standard input. Tests that use
 * it carry the tag {@code promtool}.
 */
public final class Promtool {

    /** What promtool said: its exit status and its output (standard output and error together). */
    public record Result(int exitCode, String output) {}

    private Promtool() {}

    public static Result run(String stdin, String... arguments) {
        List<String> command = new ArrayList<>();
        command.add(ExternalTool.PROMTOOL.path().toString());
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
            throw new UncheckedIOException("cannot run " + command.getFirst(), ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
