package dev.readygate.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar target/readygate.jar ...} as a process, as an operator runs it: the jar Maven packaged before the
 * end-to-end phase, with its own environment. For readygate serving ({@link #start}) and for one-shot commands such
 * as {@code check} ({@link #run}).
 */
final class ReadygateJar implements AutoCloseable {

    static final Path JAR = Path.of("target/readygate.jar");

    private final Process process;
    private final Path log;

    private ReadygateJar(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** What a one-shot command printed and how it exited. */
    record Result(int exitCode, String output) {}

    /** Starts readygate with {@code args} and {@code environment} added to this JVM's; its output goes to {@code log}. */
    static ReadygateJar start(Path log, Map<String, String> environment, List<String> args) {
        return new ReadygateJar(launch(log, environment, args), log);
    }

    /** Runs a one-shot command to its end (at most {@code limit}) and returns its exit code and output. */
    static Result run(Path log, Map<String, String> environment, Duration limit, List<String> args) {
        Process process = launch(log, environment, args);
        try {
            if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
                throw new AssertionError("readygate " + args.getFirst() + " did not end within " + limit + ":\n"
                        + Files.readString(log));
            }
            return new Result(process.exitValue(), Files.readString(log));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Process launch(Path log, Map<String, String> environment, List<String> args) {
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException(JAR + " is missing: the end-to-end tests run after `package`");
        }
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-jar",
                JAR.toString()));
        command.addAll(args);
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String logTail(int lines) {
        try {
            return Loopback.tail(Files.readString(log), lines);
        } catch (IOException e) {
            return "(no log)";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
