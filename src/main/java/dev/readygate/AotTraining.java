package dev.readygate;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The image build's training run for the JDK's AOT cache ({@code aot-training} as first argument, under
 * {@code -XX:AOTCacheOutput}): the sidecar starts as in a pod, web server and probe loop included; it runs
 * {@link #SETTLE} (the probe loop's first rounds: with no engine reachable they fail, as at a pod's start), then asks
 * {@link #PATHS} once each over a plain connection, as the kubelet does first, so that the server's request path is
 * loaded too; then the context closes and the JVM exits, writing the cache. A run stopped as the context refreshes
 * ({@code spring.context.exit=onRefresh}) leaves the web server's start and request path out of the cache: each start
 * then loads them from the jars (docs/benchmarks.md, "Start-up").
 */
final class AotTraining {

    /** The first argument that asks for a training run; the rest are the sidecar's. */
    static final String COMMAND = "aot-training";

    /** What a pod's first requests ask: the kubelet's probes. */
    static final List<String> PATHS = List.of("/livez", "/readyz");

    /** How long the sidecar runs before it is asked: a few rounds of the probe loop. */
    static final Duration SETTLE = Duration.ofSeconds(2);

    private static final Logger logger = LoggerFactory.getLogger(AotTraining.class);

    private AotTraining() {}

    /**
     * Starts the sidecar with {@code args}, asks {@link #PATHS}, closes it; returns the exit code and each path's
     * status (0: no answer).
     */
    static Result run(SpringApplication application, String[] args) {
        ConfigurableApplicationContext context = application.run(args);
        int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
        // Blocks the main thread only (no event loop): this run has nothing else to do meanwhile.
        LockSupport.parkNanos(SETTLE.toNanos());
        Map<String, Integer> answers = new LinkedHashMap<>();
        for (String path : PATHS) {
            int status = ask(port, path);
            answers.put(path, status);
            logger.info("AOT training: GET {} answered {}", path, status == 0 ? "nothing" : status);
        }
        return new Result(SpringApplication.exit(context), Map.copyOf(answers));
    }

    /** The training run's exit code and what each path answered. */
    record Result(int exitCode, Map<String, Integer> answers) {}

    /** One GET on a new connection to the loopback address; its status, or 0 with no HTTP answer. */
    private static int ask(int port, String path) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String head = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            String[] status = head.split(" ", 3);
            return status.length > 1 && status[0].startsWith("HTTP/") ? Integer.parseInt(status[1]) : 0;
        } catch (IOException | NumberFormatException ex) {
            logger.warn("AOT training: GET {} failed: {}", path, ex.toString());
            return 0;
        }
    }
}
