package dev.readygate.simulator;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Writes vLLM-shaped log lines ({@code (APIServer pid=N) INFO 11-30 12:00:01 [api_server.py:1880] ...}) to a log
 * file and optionally to standard output, each behind the configured log collector's prefix (docker compose's {@code
 * vllm-1  | }, a bracketed timestamp, Docker Desktop's, the CRI format), as the file readygate reads would hold them.
 * Writes happen in order on one background thread, so callers on event loops never block on file I/O.
 */
final class EngineLog implements AutoCloseable {

    private static final DateTimeFormatter ISO_SECONDS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

    private static final DateTimeFormatter DESKTOP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    private static final DateTimeFormatter CRI =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'").withZone(ZoneOffset.UTC);

    private final @Nullable Path file;
    private final @Nullable PrintStream stdout;
    private final Clock clock;
    private final SimulatorProperties.Deployment deployment;
    private final ExecutorService writer;
    /** vLLM's {@code %m-%d %H:%M:%S} in the engine's local time zone (collectors' prefixes stay in UTC). */
    private final DateTimeFormatter timestamp;
    /** SGLang's {@code %Y-%m-%d %H:%M:%S}, in the engine's local time zone. */
    private final DateTimeFormatter sglangTimestamp;
    /** Python logging's default {@code asctime}: {@code %Y-%m-%d %H:%M:%S,mmm}, local time. */
    private final DateTimeFormatter pythonTimestamp;

    EngineLog(
            @Nullable Path file,
            @Nullable PrintStream stdout,
            Clock clock,
            SimulatorProperties.Deployment deployment,
            String threadName) {
        this.file = file;
        this.stdout = stdout;
        this.clock = clock;
        this.deployment = deployment;
        this.timestamp = DateTimeFormatter.ofPattern("MM-dd HH:mm:ss").withZone(deployment.zone());
        this.sglangTimestamp =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(deployment.zone());
        this.pythonTimestamp =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss,SSS").withZone(deployment.zone());
        this.writer = SerialExecutor.start(threadName);
        if (file != null) {
            writer.execute(() -> createParent(file));
        }
    }

    /** A line from a process, e.g. {@code process("APIServer", 4242)}. */
    void info(String process, int pid, String source, String message) {
        line(process, pid, "INFO", source, message);
    }

    void warning(String process, int pid, String source, String message) {
        line(process, pid, "WARNING", source, message);
    }

    void error(String process, int pid, String source, String message) {
        line(process, pid, "ERROR", source, message);
    }

    void line(String process, int pid, String level, String source, String message) {
        lines(process, pid, level, source, List.of(message));
    }

    /**
     * A multi-line message (a logged traceback): vLLM's formatter repeats the header, timestamp included, on every
     * line.
     */
    void lines(String process, int pid, String level, String source, List<String> message) {
        Instant now = clock.instant();
        String header = processPrefix(process, pid) + level + " " + timestamp.format(now) + " [" + source + "] ";
        for (String line : message) {
            write(now, header + line);
        }
    }

    /**
     * Lines a process writes without vLLM's logger (an uncaught exception's traceback on stderr, uvicorn's lines),
     * behind its {@code (Process pid=N)} prefix when it has one (an empty {@code process} has none).
     */
    void bare(String process, int pid, List<String> lines) {
        Instant now = clock.instant();
        for (String line : lines) {
            write(now, processPrefix(process, pid) + line);
        }
    }

    /**
     * A line as SGLang's logger writes it: {@code [%Y-%m-%d %H:%M:%S<tag>] message}, its local time, {@code tag} a
     * scheduler's rank ({@code " TP0"}) or empty.
     */
    void sglang(String tag, String message) {
        Instant now = clock.instant();
        write(now, "[" + sglangTimestamp.format(now) + tag + "] " + message);
    }

    /**
     * A line as SGLang's weight-cache daemon's logger writes it: {@code %(asctime)s [Daemon gpu=0 tp_rank=0]
     * %(levelname)s %(message)s}, Python's default {@code asctime} ({@code %Y-%m-%d %H:%M:%S,mmm}), its local time.
     */
    void sglangDaemon(String level, String message) {
        Instant now = clock.instant();
        write(now, pythonTimestamp.format(now) + " [Daemon gpu=0 tp_rank=0] " + level + " " + message);
    }

    /** A line written as is, behind the collector's prefix only. */
    void raw(String line) {
        write(clock.instant(), line);
    }

    /**
     * The process name of {@code inner}'s lines as {@code outer} (pid {@code outerPid}) forwards them, so that {@link
     * #info} writes both prefixes, {@code (outer pid=N) (inner pid=M) }: Ray's workers' lines come through the engine
     * core's output.
     */
    static String forwardedBy(String outer, int outerPid, String inner) {
        return outer + " pid=" + outerPid + ") (" + inner;
    }

    private static String processPrefix(String process, int pid) {
        return process.isEmpty() ? "" : "(" + process + " pid=" + pid + ") ";
    }

    private void write(Instant at, String line) {
        String prefixed = collectorPrefix(at) + line;
        writer.execute(() -> write(prefixed));
    }

    /** What the configured log collector writes before each line. */
    private String collectorPrefix(Instant at) {
        return switch (deployment.logPrefix()) {
            case NONE -> "";
            case COMPOSE -> deployment.serviceName() + "  | ";
            case ISO_BRACKET -> "[" + ISO_SECONDS.format(at) + "] ";
            case DOCKER_DESKTOP -> DESKTOP.format(at) + " | ";
            case CRI -> CRI.format(at) + " stdout F ";
        };
    }

    /** Renames the file to {@code <name>.1} and starts a new one, as logrotate does. */
    void rotate() {
        writer.execute(() -> {
            if (file != null && Files.exists(file)) {
                move(file, file.resolveSibling(file.getFileName() + ".1"));
            }
        });
    }

    /** Truncates the file in place, as {@code copytruncate} does. */
    void truncate() {
        writer.execute(() -> {
            if (file != null) {
                try {
                    Files.write(file, new byte[0], StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
                } catch (IOException ex) {
                    throw new UncheckedIOException(ex);
                }
            }
        });
    }

    /** Waits until every line written so far is on disk (tests and shutdown only; never on an event loop). */
    void flush() {
        try {
            writer.submit(() -> {}).get(5, TimeUnit.SECONDS);
        } catch (Exception ex) {
            throw new IllegalStateException("engine log writer did not flush", ex);
        }
    }

    private void write(String line) {
        if (stdout != null) {
            stdout.println(line);
        }
        if (file != null) {
            try {
                Files.writeString(
                        file,
                        line + "\n",
                        StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException ex) {
                if (stdout != null) {
                    stdout.println("simulator: cannot write " + file + ": " + ex.getMessage());
                }
            }
        }
    }

    private static void createParent(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
