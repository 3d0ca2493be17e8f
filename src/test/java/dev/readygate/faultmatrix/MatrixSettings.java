package dev.readygate.faultmatrix;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The readygate and simulator settings a fault matrix runs with: the defaults (the promise as shipped), or compressed
 * intervals for CI. Every bound of {@link FaultCase} is a formula over these settings, so a compressed run checks the
 * same promise at a smaller scale: each interval and timeout below is the default divided by the factor its comment
 * gives, and the bounds scale with them.
 *
 * @param name {@code compressed} or {@code defaults}
 * @param requestTimeout {@code readygate.engine.request-timeout}
 * @param healthInterval {@code readygate.probe.health-interval}
 * @param readyInterval {@code readygate.probe.ready-interval}
 * @param notReadyInterval {@code readygate.probe.not-ready-interval}
 * @param downInterval {@code readygate.probe.down-interval}
 * @param heavyInterval {@code readygate.probe.heavy-interval}
 * @param heavyTimeout {@code readygate.probe.heavy-timeout}
 * @param heavyRetryInterval {@code readygate.probe.heavy-retry-interval}
 * @param failureThreshold {@code readygate.probe.failure-threshold}
 * @param generationInterval {@code readygate.probe.generation.interval} (the light checks' cadence)
 * @param generationTimeout {@code readygate.probe.generation.timeout} (a light check's budget with the engine's queue
 *     empty)
 * @param canaryEvery {@code readygate.probe.generation.canary-every}
 * @param slowFactor the simulator's {@code faults.slow-factor}
 * @param timeToFirstTokenObjective {@code readygate.probe.representative.max-time-to-first-token}, or null (the default:
 *     then {@code slow} cannot be seen)
 * @param loadWindow how long load runs with a fault before the run stops it (a fault readygate does not see under load
 *     today must still be seen once the load stops)
 * @param loadRequestTimeout the load clients' request timeout
 * @param verification an allowance for one cheap check and one verification (the probes' own durations on the
 *     simulator: a few tens of milliseconds, more on a busy machine)
 * @param simulator the simulator's settings (relative keys), besides the test timings of {@code RunningSimulator}
 * @param readygate the readygate settings, besides those above
 */
record MatrixSettings(
        String name,
        Duration requestTimeout,
        Duration healthInterval,
        Duration readyInterval,
        Duration notReadyInterval,
        Duration downInterval,
        Duration heavyInterval,
        Duration heavyTimeout,
        Duration heavyRetryInterval,
        int failureThreshold,
        Duration generationInterval,
        Duration generationTimeout,
        int canaryEvery,
        double slowFactor,
        @Nullable Duration timeToFirstTokenObjective,
        Duration loadWindow,
        Duration loadRequestTimeout,
        Duration verification,
        List<String> simulator,
        List<String> readygate) {

    /** The simulator's start, shutdown and restart timings (they bound the restart rows). */
    static final Duration LOAD_TIME = Duration.ofMillis(300);

    static final Duration AUTO_RESTART_DELAY = Duration.ofMillis(200);
    static final Duration CRASH_LOOP_UPTIME = Duration.ofSeconds(1);

    /** The simulator's time to first token and per output token ({@code timing.*} below). */
    static final Duration TTFT_BASE = Duration.ofMillis(20);

    static final Duration DECODE_PER_TOKEN = Duration.ofMillis(1);

    /** {@code readygate.probe.generation.output-tokens}, as shipped. */
    static final int GENERATION_OUTPUT_TOKENS = 2;

    private static final List<String> SIMULATOR = List.of(
            "preload.enabled=false",
            // wake-corrupts takes a sleep and a wake; sleep mode changes nothing else of a ready engine.
            "sleep-mode=true",
            "load-time=" + LOAD_TIME.toMillis() + "ms",
            "auto-restart-delay=" + AUTO_RESTART_DELAY.toMillis() + "ms",
            "faults.crash-loop-uptime=" + CRASH_LOOP_UPTIME.toMillis() + "ms",
            "timing.ttft-base=" + TTFT_BASE.toMillis() + "ms",
            "timing.decode-per-token=" + DECODE_PER_TOKEN.toMillis() + "ms");

    /**
     * readygate's defaults: every timing as shipped, but heavy-interval 60 s (5 min shipped: the matrix could not
     * afford it). {@code slow} (ten times slower) is not seen: there is no latency objective by default, and a light
     * check still answers within its timeout.
     */
    static MatrixSettings defaults() {
        return new MatrixSettings(
                "defaults",
                Duration.ofMillis(800),
                Duration.ofMillis(50),
                Duration.ofSeconds(1),
                Duration.ofMillis(100),
                Duration.ofMillis(20),
                Duration.ofSeconds(60),
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                3,
                Duration.ofSeconds(2),
                Duration.ofMillis(750),
                2,
                10,
                null,
                Duration.ofSeconds(120),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                SIMULATOR,
                List.of());
    }

    /**
     * For CI: the light checks as shipped (they are seconds already), the heavy-probe cadence 30 times faster (heavy-interval 2 s), its timeout 20 times shorter (1.5 s),
     * request-timeout 800 ms to 300 ms and ready-interval 1 s to 500 ms; thresholds, health-interval,
     * not-ready-interval and down-interval as shipped. A latency objective (500 ms to the first token) and a slow factor
     * of 40 (a light check then misses its 750 ms) let {@code slow} be seen; the token budget is opened wide so that
     * the many verifications of one run are never throttled (the defaults' 20,000 tokens a minute are not what is
     * measured here). The circuit breaker is as shipped (5 failures, 30 s): a fault the light checks see is kept on
     * until it opens, and the way back is measured from there.
     */
    static MatrixSettings compressed() {
        List<String> simulator = new ArrayList<>(SIMULATOR);
        simulator.addAll(List.of("faults.truncate-prompt-limit=128", "faults.kv-too-small-tokens=150"));
        return new MatrixSettings(
                "compressed",
                Duration.ofMillis(300),
                Duration.ofMillis(50),
                Duration.ofMillis(500),
                Duration.ofMillis(100),
                Duration.ofMillis(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(1500),
                Duration.ofMillis(300),
                3,
                Duration.ofSeconds(2),
                Duration.ofMillis(750),
                2,
                40,
                Duration.ofMillis(500),
                Duration.ofSeconds(5),
                Duration.ofSeconds(2),
                Duration.ofSeconds(1),
                List.copyOf(simulator),
                List.of(
                        "--readygate.probe.max-tokens-per-minute=10000000",
                        "--readygate.probe.representative.prompt-tokens=200",
                        "--readygate.probe.representative.output-tokens=8"));
    }

    /** {@code readygate.probe.suspend-after-failures} as shipped: the breaker opens after this many failures. */
    static final int SUSPEND_AFTER_FAILURES = 5;

    /**
     * How long a fault the light checks took the engine out for is kept on, at most, for the breaker to open:
     * {@link #SUSPEND_AFTER_FAILURES} verifications, each of them timing out and retried, and five seconds more.
     */
    Duration suspendWithin() {
        return heavyTimeout
                .plus(heavyRetryInterval)
                .plus(verification)
                .multipliedBy(SUSPEND_AFTER_FAILURES)
                .plusSeconds(5);
    }

    /**
     * Back to 200 after a fault cleared while the heavy probes were suspended: the next trial (a light check) within
     * {@code generation.interval} (one in flight at the clear may first wait out {@code generation.timeout}), checked
     * every {@code not-ready-interval}, then one verification.
     */
    Duration backAfterSuspension() {
        return generationInterval.plus(generationTimeout).plus(notReadyInterval).plus(verification);
    }

    /** The simulator's settings: those above and the slow factor. */
    List<String> simulatorSettings() {
        List<String> all = new ArrayList<>(simulator);
        all.add("faults.slow-factor=" + slowFactor);
        return all;
    }

    /**
     * Whether a light check on an idle engine with the {@code slow} fault misses {@code generation.timeout}: the
     * simulator stretches its time to first token and every token by the slow factor.
     */
    boolean slowLightCheckTimesOut() {
        Duration unslowed = TTFT_BASE.plus(DECODE_PER_TOKEN.multipliedBy(GENERATION_OUTPUT_TOKENS));
        return unslowed.toNanos() * slowFactor > generationTimeout.toNanos();
    }

    /** The command-line arguments of a readygate with these settings. */
    List<String> readygateArguments() {
        List<String> args = new ArrayList<>(List.of(
                "--readygate.engine.request-timeout=" + requestTimeout.toMillis() + "ms",
                "--readygate.probe.health-interval=" + healthInterval.toMillis() + "ms",
                "--readygate.probe.ready-interval=" + readyInterval.toMillis() + "ms",
                "--readygate.probe.not-ready-interval=" + notReadyInterval.toMillis() + "ms",
                "--readygate.probe.down-interval=" + downInterval.toMillis() + "ms",
                "--readygate.probe.heavy-interval=" + heavyInterval.toMillis() + "ms",
                "--readygate.probe.heavy-timeout=" + heavyTimeout.toMillis() + "ms",
                "--readygate.probe.heavy-retry-interval=" + heavyRetryInterval.toMillis() + "ms",
                "--readygate.probe.failure-threshold=" + failureThreshold,
                "--readygate.probe.generation.interval=" + generationInterval.toMillis() + "ms",
                "--readygate.probe.generation.timeout=" + generationTimeout.toMillis() + "ms",
                "--readygate.probe.generation.output-tokens=" + GENERATION_OUTPUT_TOKENS,
                "--readygate.probe.generation.canary-every=" + canaryEvery,
                // Each lane restarts its engine again and again on purpose (a crash, a latched canary, a crash loop):
                // the restart-loop hold (issue 16) would keep it out of service a minute at a time. The hold is tested
                // on its own (RestartTrackingTests, the benchmark's crash-loop stage).
                "--readygate.restart.loop-hold=0s"));
        if (timeToFirstTokenObjective != null) {
            args.add("--readygate.probe.representative.max-time-to-first-token=" + timeToFirstTokenObjective.toMillis()
                    + "ms");
        }
        args.addAll(readygate);
        return args;
    }
}
