package dev.readygate.benchmark;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The kubelet's readiness prober: by default the baseline, on vLLM's {@code /health} as the vLLM production-stack chart
 * configures it ({@link Probe#VLLM_HEALTH}: period 5 s, timeout 1 s, success threshold 1, failure threshold 3, initial
 * delay 0); or on readygate's {@code /readyz} as this project's chart configures it ({@link Probe#READYGATE_READYZ}),
 * with the kubelet's own semantics (pkg/kubelet/prober/worker.go):
 *
 * <ul>
 *   <li>a new container starts not ready (a readiness worker's initial value is Failure);
 *   <li>probes run on a ticker with the period; the ticker's phase is independent of the container's start (the
 *       worker waits a random part of the period when it is created), modelled as a uniformly random first probe in
 *       {@code [0, period)} after each container start;
 *   <li>an HTTP probe is one GET on a new connection ({@code Connection: close}), and succeeds on a status in
 *       {@code [200, 400)} within the timeout; refused, reset, timed out and any other status are failures;
 *   <li>the result changes only after {@code successThreshold} (resp. {@code failureThreshold}) identical results in a
 *       row; the run counter survives a container restart, as the kubelet's does;
 *   <li>a container that is no longer running is not probed: its readiness becomes Failure at the next tick after the
 *       kubelet learned it exited (PLEG relists every second, modelled as a uniformly random delay in [0, 1 s)).
 * </ul>
 *
 * One platform thread; its verdicts are a {@link Timeline} stamped with the same clock readygate and the simulator use.
 */
final class KubeletProber implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(1);
    static final int SUCCESS_THRESHOLD = 1;
    static final Duration PLEG_RELIST = Duration.ofSeconds(1);

    /** What the kubelet probes, how often, and how many failures in a row take the pod out. */
    record Probe(String path, Duration period, int failureThreshold) {

        /** vLLM's {@code /health}, as the vLLM production-stack chart probes it. */
        static final Probe VLLM_HEALTH = new Probe("/health", Duration.ofSeconds(5), 3);

        /** readygate's {@code /readyz}, as charts/readygate's {@code readygate.readinessProbe} sets it. */
        static final Probe READYGATE_READYZ = new Probe("/readyz", Duration.ofSeconds(1), 2);

        /** readygate's {@code /readyz/gateway}, with {@code gateway.podReadiness: gateway}, at the same settings. */
        static final Probe READYGATE_GATEWAY = new Probe("/readyz/gateway", Duration.ofSeconds(1), 2);
    }

    private final String host;
    private final int port;
    private final Probe probe;
    private final Clock clock;
    private final SplittableRandom random;
    private final Timeline ready = new Timeline(false);
    private final Thread thread;
    private final Object lock = new Object();
    private volatile boolean closed;

    // Guarded by lock.
    private long nextProbeNanos;
    private long terminatedSeenNanos = Long.MAX_VALUE;
    private boolean lastResult;
    private int resultRun;
    private boolean haveLastResult;
    private long probes;

    KubeletProber(String host, int port, Clock clock, long seed) {
        this(host, port, Probe.VLLM_HEALTH, clock, seed);
    }

    KubeletProber(String host, int port, Probe probe, Clock clock, long seed) {
        this.host = host;
        this.port = port;
        this.probe = probe;
        this.clock = clock;
        this.random = new SplittableRandom(seed);
        this.nextProbeNanos = System.nanoTime() + randomPhase();
        this.thread =
                Thread.ofPlatform().daemon().name("kubelet-prober-" + port).start(this::run);
    }

    Timeline ready() {
        return ready;
    }

    long probes() {
        synchronized (lock) {
            return probes;
        }
    }

    /** A new container (the engine process) started: not ready until probed successfully; a new ticker phase. */
    void containerStarted() {
        synchronized (lock) {
            ready.set(clock.instant(), false);
            terminatedSeenNanos = Long.MAX_VALUE;
            nextProbeNanos = System.nanoTime() + randomPhase();
        }
        LockSupport.unpark(thread);
    }

    /** The container exited at about now; the kubelet learns it at its next relist. */
    void containerTerminated() {
        synchronized (lock) {
            terminatedSeenNanos = System.nanoTime() + (long) (random.nextDouble() * PLEG_RELIST.toNanos());
        }
    }

    private long randomPhase() {
        return (long) (random.nextDouble() * probe.period().toNanos());
    }

    private void run() {
        while (!closed) {
            long due;
            synchronized (lock) {
                due = nextProbeNanos;
            }
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(this, wait);
                continue;
            }
            boolean terminated;
            synchronized (lock) {
                if (due != nextProbeNanos) {
                    continue; // re-phased by a container start meanwhile
                }
                terminated = System.nanoTime() >= terminatedSeenNanos;
                probes++;
            }
            if (terminated) {
                ready.set(clock.instant(), false);
            } else {
                boolean result = probeOnce();
                Instant at = clock.instant();
                synchronized (lock) {
                    record(result, at);
                }
            }
            synchronized (lock) {
                if (due == nextProbeNanos) {
                    long now = System.nanoTime();
                    // A Go ticker drops ticks it could not deliver: the next tick is the next multiple of the period.
                    while (nextProbeNanos <= now) {
                        nextProbeNanos += probe.period().toNanos();
                    }
                }
            }
        }
    }

    private void record(boolean result, Instant at) {
        if (haveLastResult && lastResult == result) {
            resultRun++;
        } else {
            lastResult = result;
            haveLastResult = true;
            resultRun = 1;
        }
        if ((!result && resultRun < probe.failureThreshold()) || (result && resultRun < SUCCESS_THRESHOLD)) {
            return;
        }
        ready.set(at, result);
    }

    /** One HTTP probe: GET of the probe's path on a new connection, success on 2xx/3xx within the timeout. */
    private boolean probeOnce() {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) TIMEOUT.toMillis());
            int left = (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            socket.setSoTimeout(left);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + probe.path() + " HTTP/1.1\r\nHost: " + host + ":" + port
                            + "\r\nUser-Agent: kube-probe/1.33\r\nAccept: */*\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int status = statusCode(socket.getInputStream());
            return System.nanoTime() <= deadline && status >= 200 && status < 400;
        } catch (IOException ex) {
            return false;
        }
    }

    private static int statusCode(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = in.read()) != -1 && b != '\n') {
            line.append((char) b);
        }
        String[] parts = line.toString().trim().split(" ");
        if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
            throw new IOException("not an HTTP response: " + line);
        }
        try {
            return Integer.parseInt(parts[1]);
        } catch (NumberFormatException ex) {
            throw new IOException("no status code: " + line, ex);
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
