package dev.readygate.faultmatrix;

import static org.awaitility.Awaitility.await;

import dev.readygate.readiness.EngineState;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Every fault the simulator can inject into a ready engine (docs/simulator.md, section 3), with the not-ready reason
 * readygate must give, how readygate sees it, and how it is cleared. Each row's bounds are formulas over the settings
 * (docs/readiness.md, "How fast readiness drops"), so they hold at the defaults and at compressed intervals alike.
 */
enum FaultCase {
    CRASH("crash", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_RESTART),
    ENGINE_DEAD("engine-dead (/health 503)", "engine_dead", Set.of(), Seen.GOES_AWAY, Back.HEALTH_PASSES),
    // The light checks hang too, and their failures count with /health's.
    FROZEN(
            "hang, scope all (frozen)",
            "health_failed",
            Set.of("generation_timed_out", "generation_stalled"),
            Seen.FROZEN,
            Back.NEXT_VERIFICATION),
    RESET_ALL("reset, scope all", "connection_reset", Set.of("generation_failed"), Seen.RESETS, Back.NEXT_VERIFICATION),
    // A hung request still runs in the engine: a check that timed out beside it is stalled (running, no progress).
    HANG(
            "hang",
            "timed_out",
            Set.of("generation_timed_out", "generation_stalled"),
            Seen.LIGHT_TIMES_OUT,
            Back.NEXT_VERIFICATION),
    STALL_STREAM(
            "stall-stream",
            "stalled",
            Set.of("generation_stalled", "generation_timed_out"),
            Seen.LIGHT_TIMES_OUT,
            Back.NEXT_VERIFICATION),
    SLOW(
            "slow",
            "slow",
            Set.of("generation_timed_out", "generation_stalled"),
            Seen.NEEDS_OBJECTIVE,
            Back.NEXT_VERIFICATION),
    ERROR_5XX("error-5xx", "http_status", Set.of("generation_failed"), Seen.LIGHT_FAILS, Back.NEXT_VERIFICATION),
    BUSY_429("busy-429", "http_status", Set.of("generation_failed"), Seen.LIGHT_FAILS, Back.NEXT_VERIFICATION),
    MALFORMED_JSON(
            "malformed-json",
            "malformed_response",
            Set.of("generation_failed"),
            Seen.LIGHT_FAILS,
            Back.NEXT_VERIFICATION),
    TRUNCATED_SSE(
            "truncated-sse", "truncated_stream", Set.of("generation_failed"), Seen.LIGHT_FAILS, Back.NEXT_VERIFICATION),
    RESET("reset", "connection_reset", Set.of("generation_failed"), Seen.LIGHT_FAILS, Back.NEXT_VERIFICATION),
    GENERATION_FAILS(
            "generation-fails (GPU fault: error events)",
            "error_event",
            Set.of("generation_failed"),
            Seen.LIGHT_FAILS,
            Back.NEXT_VERIFICATION),
    KV_TOO_SMALL("kv-too-small", "error_event", Set.of(), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    TRUNCATE_PROMPT("truncate-prompt", "prompt_tokens_mismatch", Set.of(), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    WRONG_WEIGHTS("wrong-weights", "canary_mismatch", Set.of(), Seen.CANARY, Back.AFTER_RESTART),
    CRASH_LOOP("crash-loop", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_CRASH_LOOP),
    STARTUP_FAILURE(
            "startup-failure, then a crash", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_STARTUP_FAILURE),
    // Like startup-failure, the API server's configuration check fails the next start, sooner (before any engine core).
    CONFIG_ERROR("config-error, then a crash", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_STARTUP_FAILURE),
    // The engine is put to sleep (level 1) and woken with its weights corrupted: the wake's own verification fails.
    WAKE_CORRUPTS("wake-corrupts (a sleep, then a wake)", "canary_mismatch", Set.of(), Seen.WAKE, Back.AFTER_RESTART);

    /** How readygate sees a fault: this decides its bound (docs/readiness.md, "How fast readiness drops"). */
    enum Seen {
        /** Connection refused or {@code /health} 503: out at the next health check. */
        GOES_AWAY,
        /** Every request, {@code /health} included, is read and never answered. */
        FROZEN,
        /** Every connection, {@code /health}'s included, is reset. */
        RESETS,
        /**
         * {@code /health} stays 200 and generation fails at once (an error status or event, bad framing, a reset): the
         * light checks see it, idle or under load, failure-threshold times, the next one at the next cycle.
         */
        LIGHT_FAILS,
        /**
         * {@code /health} stays 200 and generation hangs or streams stall: each light check waits out its budget
         * ({@code generation.timeout} with the engine's queue empty, as in the matrix); a heavy probe that was already
         * running waits out {@code heavy-timeout}, and the heavy retries then go first.
         */
        LIGHT_TIMES_OUT,
        /** Answers from other weights: the next canary among the light checks sees it, and one failure latches. */
        CANARY,
        /**
         * A wake that serves other answers: out of service since it fell asleep, the wake is seen within
         * not-ready-interval and verified as a start is; its canary fails, and one failure latches. Timed from the
         * wake.
         */
        WAKE,
        /**
         * Only a heavy probe sees it (it needs the representative prompt's size: a KV cache too small for it, a prompt
         * cut short); under load the heavy probe is deferred by at most another {@code heavy-interval}.
         */
        HEAVY_PROBE,
        /**
         * Correct but slow: a heavy probe sees it with a latency objective, a light check when the slowed check
         * misses {@code generation.timeout}; under load neither (a slow engine that makes progress is busy, and the
         * objectives do not apply under load), so it is seen once the load stops.
         */
        NEEDS_OBJECTIVE
    }

    /** What brings the engine back, and from when the time back to 200 is counted. */
    enum Back {
        /** The fault is cleared in the same process: {@code /health} passes and the start is verified again. */
        HEALTH_PASSES,
        /** The fault is cleared: the next verification passes. */
        NEXT_VERIFICATION,
        /** A new engine process (auto-restart after the crash, a restart after a latched failure): from when it listens. */
        AFTER_RESTART,
        /** {@code crash-loop} is turned off: a crash already scheduled still fires, the next start stays up. */
        AFTER_CRASH_LOOP,
        /**
         * {@code startup-failure} (or {@code config-error}) is turned off: the start in progress still fails, the next
         * one serves.
         */
        AFTER_STARTUP_FAILURE
    }

    /** The conditions of a ready engine a fault arises in. */
    enum Condition {
        IDLE,
        LOAD;

        String value() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Issue 16's goal for a ready engine: a fault that breaks generation is seen within 5 s, idle or under load. */
    static final Duration READY_ENGINE_GOAL = Duration.ofSeconds(5);

    final String label;
    final String reason;
    /**
     * The reasons of the light generation checks ({@code probe.generation.*}) when they see the fault; they often see
     * it before a heavy probe does, so any of them is the fault's. A slow engine misses the check's timeout before its
     * first token or between two ({@code generation_timed_out}, {@code generation_stalled}). Empty: only the reason
     * above.
     */
    final Set<String> lightReasons;

    final Seen seen;
    final Back back;

    FaultCase(String label, String reason, Set<String> lightReasons, Seen seen, Back back) {
        this.label = label;
        this.reason = reason;
        this.lightReasons = lightReasons;
        this.seen = seen;
        this.back = back;
    }

    /**
     * Whether readygate sees this fault at all with these settings: {@code slow} needs a latency objective, which the
     * defaults do not set, or a light check that the slowed engine makes miss its timeout.
     */
    boolean seenWith(MatrixSettings s) {
        return seen != Seen.NEEDS_OBJECTIVE || s.timeToFirstTokenObjective() != null || s.slowLightCheckTimesOut();
    }

    /** Whether {@code observed} is this fault's reason: the heavy probes' or the light checks'. */
    boolean isItsReason(@Nullable String observed) {
        return observed != null && (heavyReasons().contains(observed) || lightReasons.contains(observed));
    }

    /** The heavy probes' reasons: the fault's, and for a hang or a stall either (a timeout beside running requests). */
    private Set<String> heavyReasons() {
        return seen == Seen.LIGHT_TIMES_OUT ? Set.of("timed_out", "stalled") : Set.of(reason);
    }

    /** The reason, or all its reasons, as the table's check says them. */
    String reasons() {
        List<String> all = new ArrayList<>(List.of(reason));
        all.addAll(new TreeSet<>(heavyReasons()));
        all.addAll(new TreeSet<>(lightReasons));
        return String.join(" or ", new java.util.LinkedHashSet<>(all));
    }

    /** Whether issue 16 promises it within {@link #READY_ENGINE_GOAL}: faults that make generation fail or hang. */
    boolean inReadyEngineGoal() {
        return seen == Seen.LIGHT_FAILS || seen == Seen.LIGHT_TIMES_OUT || seen == Seen.CANARY;
    }

    /**
     * The promised time from the fault to {@code /readyz} 503 in {@code condition}, for the first not-ready
     * {@code reason} seen (null: the longest any reason may take): null when these settings promise none ({@code
     * slow} without an objective; {@code slow} under load, which is busy, not broken).
     */
    @Nullable
    Duration toNotReady(MatrixSettings s, Condition condition, @Nullable String reason) {
        Duration rt = s.requestTimeout();
        Duration hi = s.healthInterval();
        int ft = s.failureThreshold();
        return switch (seen) {
            // A call in flight when /health turns 503 may take up to request-timeout.
            case GOES_AWAY -> hi.plus(rt);
            // failure-threshold timed-out checks, the cheap check already past /health waiting out its /metrics and
            // /version calls, and a heavy probe in flight at that moment (up to heavy-timeout). The light checks'
            // timeouts count with them and only make it sooner.
            case FROZEN -> rt.plus(hi).multipliedBy(ft).plus(rt.multipliedBy(2)).plus(s.heavyTimeout());
            // failure-threshold reset checks, health-interval apart, and the cheap check in progress.
            case RESETS -> rt.plus(hi).multipliedBy(ft).plus(s.readyInterval());
            case LIGHT_FAILS -> lightFails(s);
            case LIGHT_TIMES_OUT ->
                reason != null && lightReasons.contains(reason) ? lightTimesOut(s) : heavyInFlight(s);
            case CANARY -> nextCanary(s);
            case WAKE -> s.notReadyInterval().plus(s.verification());
            case HEAVY_PROBE -> condition == Condition.LOAD ? heavyProbes(s).plus(s.heavyInterval()) : heavyProbes(s);
            case NEEDS_OBJECTIVE -> {
                if (condition == Condition.LOAD || !seenWith(s)) {
                    yield null;
                }
                // Slowed heavy probes that started first hold the light checks up to heavy-timeout each.
                Duration light = s.slowLightCheckTimesOut() ? heavyInFlight(s) : null;
                Duration heavy = s.timeToFirstTokenObjective() != null ? heavyProbes(s) : null;
                if (reason != null && lightReasons.contains(reason) && light != null) {
                    // Heavy probes that fail too (the objective missed, or their timeout on the idle engine) are
                    // retried every heavy-retry-interval, each holding the light checks off: the later of the two.
                    yield heavy == null ? light : max(light, heavy);
                }
                if (reason != null && reason.equals(this.reason) && heavy != null) {
                    yield heavy;
                }
                yield light == null ? heavy : heavy == null ? light : max(light, heavy);
            }
        };
    }

    /** The promised time from the fault to {@code /readyz} 503 with no reason seen yet: the longest any reason takes. */
    @Nullable
    Duration toNotReady(MatrixSettings s, Condition condition) {
        return toNotReady(s, condition, null);
    }

    /** The formula of {@link #toNotReady(MatrixSettings, Condition, String)}, as the table says it. */
    @Nullable
    String formula(MatrixSettings s, Condition condition, @Nullable String reason) {
        return switch (seen) {
            case GOES_AWAY -> "health-interval + request-timeout";
            case FROZEN ->
                "failure-threshold × (request-timeout + health-interval) + 2 × request-timeout + heavy-timeout";
            case RESETS -> "failure-threshold × (request-timeout + health-interval) + ready-interval";
            case LIGHT_FAILS -> LIGHT_FAILS_FORMULA;
            case LIGHT_TIMES_OUT -> {
                yield reason != null && lightReasons.contains(reason)
                        ? LIGHT_TIMES_OUT_FORMULA
                        : HEAVY_IN_FLIGHT_FORMULA
                                + (reason == null
                                        ? ": the longest, a heavy probe running"
                                        : ": a heavy probe was running");
            }
            case CANARY -> "generation.canary-every × (generation.interval + health-interval)";
            case WAKE -> "not-ready-interval + a verification: the wake's own, from the engine awake";
            case HEAVY_PROBE ->
                condition == Condition.LOAD
                        ? "2 × heavy-interval + ready-interval + failure-threshold × (heavy-timeout"
                                + " + max(heavy-retry-interval, ready-interval)): deferred under load"
                        : HEAVY_FORMULA;
            case NEEDS_OBJECTIVE -> {
                Duration bound = toNotReady(s, condition, reason);
                if (bound == null) {
                    yield null;
                }
                yield bound.equals(heavyProbes(s))
                        ? HEAVY_FORMULA
                        : HEAVY_IN_FLIGHT_FORMULA + ": the light checks' bound for a hang, slowed heavy probes running"
                                + " first";
            }
        };
    }

    private static final String LIGHT_FAILS_FORMULA =
            "generation.interval + 2 × health-interval + (failure-threshold − 1) × max(heavy-retry-interval,"
                    + " health-interval)";
    private static final String LIGHT_TIMES_OUT_FORMULA =
            "generation.interval + health-interval + failure-threshold × (generation.timeout + health-interval)";
    private static final String HEAVY_IN_FLIGHT_FORMULA =
            "generation.interval + health-interval + failure-threshold × (heavy-timeout + health-interval)";
    private static final String HEAVY_FORMULA = "heavy-interval + ready-interval + failure-threshold × (heavy-timeout"
            + " + max(heavy-retry-interval, ready-interval))";

    /**
     * The promised time back to {@code /readyz} 200 once the fault cleared, when it lasted until the heavy probes were
     * suspended ({@code suspended}) or not. Suspended, no heavy probe is in flight to wait out: the breaker's half-open
     * trial is a light check, then one verification ({@link MatrixSettings#backAfterSuspension}), as docs/readiness.md
     * promises; it was held to the larger of the two, at the defaults the 32.1 s of a heavy probe in flight.
     */
    Duration backToReady(MatrixSettings s, boolean suspended) {
        return suspended ? s.backAfterSuspension() : backToReady(s);
    }

    /** The promised time back to {@code /readyz} 200, counted from {@link #clearedAt}. */
    Duration backToReady(MatrixSettings s) {
        Duration verify = s.verification();
        return switch (back) {
            case HEALTH_PASSES -> s.notReadyInterval().plus(verify);
            // A heavy probe in flight when the fault cleared may still wait out heavy-timeout (a hung request stays
            // hung); the next one starts within heavy-retry-interval, checked every not-ready-interval.
            case NEXT_VERIFICATION ->
                s.heavyTimeout()
                        .plus(s.heavyRetryInterval())
                        .plus(s.notReadyInterval())
                        .plus(verify);
            // Nothing listened; a refused connect is retried every down-interval.
            case AFTER_RESTART -> s.downInterval().plus(verify);
            case AFTER_CRASH_LOOP ->
                MatrixSettings.CRASH_LOOP_UPTIME
                        .plus(MatrixSettings.AUTO_RESTART_DELAY)
                        .plus(MatrixSettings.LOAD_TIME)
                        .plus(s.downInterval())
                        .plus(verify);
            case AFTER_STARTUP_FAILURE ->
                MatrixSettings.LOAD_TIME
                        .multipliedBy(2)
                        .plus(MatrixSettings.AUTO_RESTART_DELAY)
                        .plus(s.downInterval())
                        .plus(verify);
        };
    }

    /** Injects the fault into a ready engine; returns when it took effect, on the simulator's clock. */
    Instant inject(Lane lane) {
        RunningSimulator engine = lane.engine;
        return switch (this) {
            case WAKE_CORRUPTS -> {
                // Nothing shows until a wake: a level 1 sleep, seen by readygate, then a wake, timed from its request.
                engine.fault(simulatorFault(), false);
                Instant asleep = lane.now();
                engine.sleep(1);
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> lane.changes.stream()
                                .anyMatch(change ->
                                        !change.at().isBefore(asleep) && change.kind() == EngineState.Kind.SLEEPING));
                Instant wake = lane.now();
                engine.wakeUp();
                yield wake;
            }
            case CRASH -> {
                engine.crash();
                yield dated(engine.stoppedAt());
            }
            case FROZEN -> fault(engine, "hang", true);
            case RESET_ALL -> fault(engine, "reset", true);
            case STARTUP_FAILURE, CONFIG_ERROR -> {
                // A serving engine is not touched by startup-failure or config-error: its next start is. The crash
                // begins it.
                engine.fault(simulatorFault(), false);
                engine.crash();
                yield dated(engine.stoppedAt());
            }
            default -> fault(engine, simulatorFault(), false);
        };
    }

    private String simulatorFault() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    private static Instant fault(RunningSimulator engine, String name, boolean everywhere) {
        engine.fault(name, everywhere);
        return dated(engine.faultSince(name));
    }

    private static Instant dated(@Nullable Instant at) {
        return Objects.requireNonNull(at, "the simulator did not date the fault");
    }

    /**
     * Clears the fault; returns the instant the time back to 200 is counted from. A crash clears itself (the engine is
     * started again): from when it listens again. A latched canary mismatch holds until the engine restarts: the
     * fault is cleared and the engine restarted, counted from when the new start listens.
     */
    Instant clear(RunningSimulator engine, java.time.Clock clock) {
        return switch (back) {
            case AFTER_RESTART -> {
                if (this == WRONG_WEIGHTS || this == WAKE_CORRUPTS) {
                    engine.clearFaults();
                    engine.restartAndAwait(StartupPath.COLD);
                } else {
                    engine.awaitServing();
                }
                yield dated(engine.listeningSince());
            }
            default -> {
                Instant at = clock.instant();
                engine.clearFaults();
                yield at;
            }
        };
    }

    /**
     * A fault that fails generation at once: the next light check starts within generation.interval (checked each
     * cycle, health-interval apart); each failure after it comes at the next cycle from a light check confirming it, or
     * within heavy-retry-interval from a heavy probe retrying one that failed first (they count together). The
     * checks' own time (milliseconds) is not in it.
     */
    private static Duration lightFails(MatrixSettings s) {
        Duration hi = s.healthInterval();
        return s.generationInterval()
                .plus(hi.multipliedBy(2))
                .plus(max(s.heavyRetryInterval(), hi).multipliedBy(s.failureThreshold() - 1L));
    }

    /**
     * A fault that makes generation hang or stall: the next light check starts within generation.interval, and each of
     * failure-threshold checks waits out generation.timeout (the matrix's load leaves the engine's queue empty, so the
     * budget does not grow), the next at the next cycle.
     */
    private static Duration lightTimesOut(MatrixSettings s) {
        Duration hi = s.healthInterval();
        return s.generationInterval()
                .plus(hi)
                .plus(s.generationTimeout().plus(hi).multipliedBy(s.failureThreshold()));
    }

    /**
     * The same with a heavy probe started before the first light check saw the fault: it waits out heavy-timeout, and
     * while a verification is failing its retry goes before the light check at every cycle, so failure-threshold heavy
     * probes time out (readygate never runs both at once).
     */
    private static Duration heavyInFlight(MatrixSettings s) {
        Duration hi = s.healthInterval();
        return s.generationInterval().plus(hi).plus(s.heavyTimeout().plus(hi).multipliedBy(s.failureThreshold()));
    }

    /** The next canary: every canary-every-th light check, each within generation.interval + health-interval. */
    private static Duration nextCanary(MatrixSettings s) {
        return s.generationInterval().plus(s.healthInterval()).multipliedBy(s.canaryEvery());
    }

    /**
     * The next heavy probe (heavy-interval, checked each ready-interval), then failure-threshold failed verifications
     * each up to heavy-timeout, heavy-retry-interval apart (checked each ready-interval).
     */
    private static Duration heavyProbes(MatrixSettings s) {
        return s.heavyInterval()
                .plus(s.readyInterval())
                .plus(s.heavyTimeout()
                        .plus(max(s.heavyRetryInterval(), s.readyInterval()))
                        .multipliedBy(s.failureThreshold()));
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
