package dev.readygate.e2e;

import dev.readygate.ExternalTool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * llama.cpp's {@code llama-server} as a process on a loopback port: started with the given flags, its output captured to
 * a log file, stopped (SIGTERM, then SIGKILL), killed, paused and resumed by signal.
 *
 * <p>Where the binary comes from: {@link ExternalTool#LLAMA_SERVER} (the system property
 * {@code readygate-test.llama-server}, the environment variable {@code READYGATE_LLAMA_SERVER}, a {@code llama-server}
 * on the PATH). {@code ./run-tests} builds one from llama.cpp's source when none is there and passes it with the
 * property (README, "The real-engine suite").
 *
 * <p>llama-server sets {@code SO_REUSEPORT}: two servers can listen on one port at once. So a port is used once: every
 * start takes a fresh one, except {@link #restart()}, which waits until the old process is gone first.
 *
 * <p>Public, with the few members it needs, for the benchmark harness's saturated llama-server stage.
 */
public final class LlamaServer implements AutoCloseable {

    private final Path binary;
    private final Path model;
    private final List<String> flags;
    private final Map<String, String> environment;
    private final Path log;
    private final int port;
    private @Nullable Process process;
    private int starts;

    private LlamaServer(Path binary, Path model, List<String> flags, Map<String, String> environment, Path log) {
        this.binary = binary;
        this.model = model;
        this.flags = List.copyOf(flags);
        this.environment = Map.copyOf(environment);
        this.log = log;
        this.port = Loopback.freePort();
    }

    /** The binary, or a failed test saying where it was looked for ({@link ExternalTool#LLAMA_SERVER}). */
    static Path binary() {
        return ExternalTool.LLAMA_SERVER.path();
    }

    /**
     * Starts llama-server serving {@code model} on a fresh port with {@code flags} (e.g. {@code -c 256}), its log in
     * {@code log}. Returns at once: the server binds its port early and loads the model after.
     */
    public static LlamaServer start(
            Path binary, Path model, Path log, Map<String, String> environment, String... flags) {
        LlamaServer server = new LlamaServer(binary, model, List.of(flags), environment, log);
        server.launch();
        return server;
    }

    /**
     * A server on a fresh port that is not started yet: {@link #restart()} starts it. For a test that must have readygate
     * watching the port before the engine begins to load.
     */
    static LlamaServer notStarted(Path binary, Path model, Path log, Map<String, String> environment, String... flags) {
        return new LlamaServer(binary, model, List.of(flags), environment, log);
    }

    public int port() {
        return port;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    Path log() {
        return log;
    }

    /** The model file the server reads; writing another one here and restarting serves other weights. */
    Path model() {
        return model;
    }

    long pid() {
        return running().pid();
    }

    /** How many times this server was started (the first start included). */
    int starts() {
        return starts;
    }

    private void launch() {
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "--model",
                model.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--threads",
                "1",
                "--seed",
                "0"));
        command.addAll(flags);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(environment);
        try {
            process = builder.start();
            starts++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGKILL, as {@code kill -9}: no shutdown at all. */
    void kill() {
        Process p = running();
        p.destroyForcibly();
        awaitExit(p);
    }

    /** Whether the server's process runs (a paused one does). */
    boolean alive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** Starts the server (again) on its port, once the previous process, if any, is gone. */
    void restart() {
        Process previous = process;
        if (previous != null && previous.isAlive()) {
            throw new IllegalStateException("llama-server still runs; stop or kill it first");
        }
        launch();
    }

    /** SIGSTOP: the process keeps its port but answers nothing. */
    void pause() {
        signal("STOP");
    }

    /** SIGCONT. */
    void resume() {
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The last lines of the server's log, for a failure message. */
    public String logTail(int lines) {
        try {
            return Loopback.tail(Files.readString(log), lines);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Whether the log has a line containing {@code text}. */
    boolean logged(String text) {
        try {
            return Files.readString(log).contains(text);
        } catch (IOException e) {
            return false;
        }
    }

    private Process running() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("llama-server is not running; its log:\n" + logTail(20));
        }
        return p;
    }

    /** SIGCONT (a paused server cannot handle SIGTERM), SIGTERM, then SIGKILL after 10 s. */
    @Override
    public void close() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        try {
            signal("CONT");
        } catch (IllegalStateException e) {
            // It may have exited meanwhile.
        }
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        awaitExit(p);
    }

    private static void awaitExit(Process p) {
        try {
            if (!p.waitFor(Duration.ofSeconds(30).toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("llama-server did not exit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
