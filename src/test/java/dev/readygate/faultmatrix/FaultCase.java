package dev.readygate.faultmatrix;

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
    FROZEN("hang, scope all (frozen)", "health_failed", Set.of(), Seen.FROZEN, Back.NEXT_VERIFICATION),
    RESET_ALL("reset, scope all", "connection_reset", Set.of(), Seen.RESETS, Back.NEXT_VERIFICATION),
    HANG("hang", "timed_out", Set.of("generation_timed_out"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    STALL_STREAM("stall-stream", "stalled", Set.of("generation_stalled"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    SLOW(
            "slow",
            "slow",
            Set.of("generation_timed_out", "generation_stalled"),
            Seen.NEEDS_OBJECTIVE,
            Back.NEXT_VERIFICATION),
    ERROR_5XX("error-5xx", "http_status", Set.of("generation_failed"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    BUSY_429("busy-429", "http_status", Set.of("generation_failed"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    MALFORMED_JSON(
            "malformed-json",
            "malformed_response",
            Set.of("generation_failed"),
            Seen.HEAVY_PROBE,
            Back.NEXT_VERIFICATION),
    TRUNCATED_SSE(
            "truncated-sse", "truncated_stream", Set.of("generation_failed"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    RESET("reset", "connection_reset", Set.of("generation_failed"), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    GENERATION_FAILS(
            "generation-fails (GPU fault: error events)",
            "error_event",
            Set.of("generation_failed"),
            Seen.HEAVY_PROBE,
            Back.NEXT_VERIFICATION),
    KV_TOO_SMALL("kv-too-small", "error_event", Set.of(), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    TRUNCATE_PROMPT("truncate-prompt", "prompt_tokens_mismatch", Set.of(), Seen.HEAVY_PROBE, Back.NEXT_VERIFICATION),
    WRONG_WEIGHTS("wrong-weights", "canary_mismatch", Set.of(), Seen.LATCHED, Back.AFTER_RESTART),
    CRASH_LOOP("crash-loop", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_CRASH_LOOP),
    STARTUP_FAILURE(
            "startup-failure, then a crash", "engine_down", Set.of(), Seen.GOES_AWAY, Back.AFTER_STARTUP_FAILURE);

    /** How readygate sees a fault: this decides its bound. */
    enum Seen {
        /** Connection refused or {@code /health} 503: out at the next health check. */
        GOES_AWAY,
        /** Every request, {@code /health} included, is read and never answered. */
        FROZEN,
        /** Every connection, {@code /health}'s included, is reset. */
        RESETS,
        /** {@code /health} stays 200: only a heavy probe sees it, failure-threshold times. */
        HEAVY_PROBE,
        /** Only a heavy probe sees it, and one failure latches (the canary's answer). */
        LATCHED,
        /** Correct but slow: only a heavy probe with a latency objective sees it. */
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
        /** {@code startup-failure} is turned off: the start in progress still fails, the next one serves. */
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
     * The reasons of the light generation checks (issue 16: a few tokens every {@code probe.generation.interval}) when
     * they see the fault; they often see it before a heavy probe does, so any of them is the fault's. A slow engine
     * misses the check's timeout before its first token or between two ({@code generation_timed_out},
     * {@code generation_stalled}). Empty: only the reason above.
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
     * defaults do not set, or the light checks, whose timeout a ten times slower engine misses.
     */
    boolean seenWith(MatrixSettings s) {
        return seen != Seen.NEEDS_OBJECTIVE || s.timeToFirstTokenObjective() != null || !lightReasons.isEmpty();
    }

    /** Whether {@code observed} is this fault's reason: the heavy probes' or the light checks'. */
    boolean isItsReason(@Nullable String observed) {
        return reason.equals(observed) || lightReasons.contains(observed);
    }

    /** The reason, or both reasons, as the table's check says them. */
    String reasons() {
        List<String> all = new ArrayList<>(List.of(reason));
        all.addAll(new TreeSet<>(lightReasons));
        return String.join(" or ", all);
    }

    /** Whether only a heavy probe sees it (so today nothing sees it while real traffic keeps the engine busy). */
    boolean heavyProbeOnly() {
        return seen == Seen.HEAVY_PROBE || seen == Seen.LATCHED || seen == Seen.NEEDS_OBJECTIVE;
    }

    /** Whether issue 16 promises it within {@link #READY_ENGINE_GOAL}: faults that make generation fail or hang. */
    boolean inReadyEngineGoal() {
        return heavyProbeOnly() && this != SLOW && this != TRUNCATE_PROMPT;
    }

    /**
     * The promised time from the fault to {@code /readyz} 503 on a ready, idle engine (docs/readiness.md): null when
     * these settings promise none.
     */
    @Nullable
    Duration toNotReady(MatrixSettings s) {
        Duration rt = s.requestTimeout();
        Duration hi = s.healthInterval();
        int ft = s.failureThreshold();
        return switch (seen) {
            // A call in flight when /health turns 503 may take up to request-timeout.
            case GOES_AWAY -> hi.plus(rt);
            // failure-threshold timed-out checks, the cheap check already past /health waiting out its /metrics and
            // /version calls, and a heavy probe in flight at that moment (up to heavy-timeout).
            case FROZEN -> rt.plus(hi).multipliedBy(ft).plus(rt.multipliedBy(2)).plus(s.heavyTimeout());
            // failure-threshold reset checks, health-interval apart, and the cheap check in progress.
            case RESETS -> rt.plus(hi).multipliedBy(ft).plus(s.readyInterval());
            case HEAVY_PROBE -> heavyProbes(s);
            case NEEDS_OBJECTIVE -> seenWith(s) ? heavyProbes(s) : null;
            // One verification: the representative probe and the canary, each up to heavy-timeout.
            case LATCHED ->
                s.heavyInterval().plus(s.readyInterval()).plus(s.heavyTimeout().multipliedBy(2));
        };
    }

    /**
     * The promised time from the fault to {@code /readyz} 503 in {@code condition}: the idle bound, except for a fault
     * only a heavy probe sees under load, for which none is promised today (heavy probes wait for an idle engine and
     * are skipped while requests succeed): null. With {@code readyEngine} (issue 16 is in), issue 16's goal.
     */
    @Nullable
    Duration toNotReady(MatrixSettings s, Condition condition, boolean readyEngine) {
        if (readyEngine && inReadyEngineGoal()) {
            return READY_ENGINE_GOAL;
        }
        if (condition == Condition.LOAD && heavyProbeOnly()) {
            return null;
        }
        return toNotReady(s);
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
    Instant inject(RunningSimulator engine) {
        return switch (this) {
            case CRASH -> {
                engine.crash();
                yield dated(engine.stoppedAt());
            }
            case FROZEN -> fault(engine, "hang", true);
            case RESET_ALL -> fault(engine, "reset", true);
            case STARTUP_FAILURE -> {
                // A serving engine is not touched by startup-failure: its next start is. The crash begins it.
                engine.fault("startup-failure", false);
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
                if (this == WRONG_WEIGHTS) {
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
