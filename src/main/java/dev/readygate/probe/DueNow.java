package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What the probe loop ({@link ProbeSchedule}) runs now, as pure rules of the engine's state, what is known of its start,
 * the time and the settings: which cheap check a cycle makes ({@link #cheapCheck}), how long the pause after it lasts
 * ({@link #pause}), and what the cycle then starts ({@link #decide}): the heavy probes, a light check, or a light check
 * put off. The loop only sends what these say and applies what comes back.
 */
final class DueNow {

    /** Requests our own verification adds to {@code vllm:request_success_total} (representative and canary); each
     * light check adds one more. */
    static final int OWN_REQUESTS_PER_VERIFICATION = 2;

    private DueNow() {}

    /** What a cycle starts. */
    enum Start {
        /** Nothing: nothing is due, or what is due runs already. */
        NOTHING,
        /** The heavy probes: one verification. */
        HEAVY,
        /**
         * The generation check as the trial of an engine whose heavy probes are suspended and that is out by its light
         * checks, then the heavy probes (a trial that passes makes them the breaker's half-open trial at once).
         */
        TRIAL_THEN_HEAVY,
        /** A light check, given up at its budget. */
        LIGHT,
        /** A light check of a {@link #blind} engine, waited for to its end. */
        LIGHT_WAITED_FOR,
        /** A light check put off (every slot taken, as {@code /metrics} says): this scrape is what the next is judged by. */
        PUT_OFF_BY_METRICS,
        /** As {@link #PUT_OFF_BY_METRICS}, and the one put off before judged by the metrics since it. */
        JUDGED_BY_METRICS,
        /** A light check put off (every slot taken, as {@code /slots} says): this answer is what the next is judged by. */
        PUT_OFF_BY_SLOTS,
        /** As {@link #PUT_OFF_BY_SLOTS}, and the one put off before judged by {@code /slots} since it. */
        JUDGED_BY_SLOTS;

        /** Whether this starts the heavy probes. */
        boolean heavy() {
            return this == HEAVY || this == TRIAL_THEN_HEAVY;
        }
    }

    /** The cheap check a cycle makes. */
    enum CheapCheck {
        /** {@code /health}, then {@code /metrics}, {@code /slots}, {@code /v1/models}, discovery and {@code /version}. */
        FULL,
        /** {@code /health} alone, between two full checks of an engine that serves. */
        HEALTH_ONLY
    }

    /**
     * How long a light check sent now would wait for its answer ({@link GenerationBudget}), on the metrics from before
     * it (null: none) and the speed measured on this start.
     */
    @FunctionalInterface
    interface LightBudget {
        Duration of(@Nullable EngineMetricsSample before, EngineFacts.@Nullable Speed speed);
    }

    /**
     * The settings the rules read.
     *
     * @param notReadyInterval between two cycles while the engine is not ready
     * @param downInterval between two cycles while its port refuses connections
     * @param healthInterval between two cycles of an engine that serves
     * @param readyInterval between two full cheap checks of an engine that serves
     * @param heavyInterval between two verifications of a ready engine
     * @param heavyRetryInterval between two verifications while one fails
     * @param lightInterval between two light checks ({@code generation.interval})
     * @param lightBudget the light checks' budget; null without light checks
     */
    record Cadence(
            Duration notReadyInterval,
            Duration downInterval,
            Duration healthInterval,
            Duration readyInterval,
            Duration heavyInterval,
            Duration heavyRetryInterval,
            Duration lightInterval,
            @Nullable LightBudget lightBudget) {

        static Cadence of(ReadygateProperties.Probe config, @Nullable LightChecks lightChecks) {
            return new Cadence(
                    config.notReadyInterval(),
                    config.downInterval(),
                    config.healthInterval(),
                    config.readyInterval(),
                    config.heavyInterval(),
                    config.heavyRetryInterval(),
                    config.generation().interval(),
                    lightChecks == null ? null : lightChecks::budget);
        }
    }

    /**
     * What the loop knows beside the state and the facts.
     *
     * @param heavyRunning the heavy probes run
     * @param lightRunning a light check runs
     * @param heavyStarted the heavy probes started this cycle already: at most once a cycle (a light check may follow
     *     them in the same cycle when they ended at once, suspended or over the token budget)
     * @param suspended the heavy probes of this start are suspended (the circuit breaker is open)
     * @param lastTrial when the last trial of a suspended engine ran; null before one
     */
    record Loop(
            boolean heavyRunning,
            boolean lightRunning,
            boolean heavyStarted,
            boolean suspended,
            @Nullable Instant lastTrial) {}

    /**
     * The full cheap check once every {@code ready-interval} on an engine that serves, with {@code /health} alone
     * between; every cycle a full one otherwise.
     *
     * @param lastFull when the last full check began; null before one
     */
    static CheapCheck cheapCheck(EngineState state, @Nullable Instant lastFull, Instant now, Cadence cadence) {
        return state.acceptsTraffic() && lastFull != null && now.isBefore(lastFull.plus(cadence.readyInterval()))
                ? CheapCheck.HEALTH_ONLY
                : CheapCheck.FULL;
    }

    /**
     * The pause after a cycle: {@code health-interval} on an engine that serves ({@code ready-interval} when its
     * {@code /health} runs a generation, {@link EngineDialect#healthGenerates}: then each cycle is a full one, and
     * the engine gets one such request a {@code ready-interval}); {@code down-interval} while nothing listens (a check
     * is a refused connect, free for the engine, and it decides how soon a start is seen); {@code not-ready-interval}
     * otherwise.
     *
     * @param dialect the engine's dialect, once discovered; null before
     */
    static Duration pause(EngineState state, @Nullable EngineDialect dialect, Cadence cadence) {
        if (state.acceptsTraffic()) {
            return dialect != null && dialect.healthGenerates() ? cadence.readyInterval() : cadence.healthInterval();
        }
        return state instanceof EngineState.Down down && down.cause() == Reason.ENGINE_DOWN
                ? cadence.downInterval()
                : cadence.notReadyInterval();
    }

    /**
     * What a cycle starts, after its cheap check: the heavy probes when they are due ({@link #heavyDue}) and nothing
     * runs; else, on an engine that serves, a light check every {@code generation.interval} (at the next cycle again
     * while one failed, to confirm or clear it fast), never beside the heavy probes (readygate's own requests in one
     * batch would move the canary's logprob: vLLM is not batch-invariant). A light check that would only wait for a
     * slot while holding a server thread ({@link #waitsHoldingAThread}) is put off, and judged from the engine's own
     * evidence instead, over at least {@code generation.interval} and the budget the check would have had. In gateway
     * mode, client requests served whole within the interval stand in for the light check ({@link #servedRecently}).
     */
    static Start decide(EngineState state, EngineFacts facts, Instant now, Cadence cadence, Loop loop) {
        if (!loop.heavyStarted()
                && facts.card() != null
                && !loop.heavyRunning()
                && !loop.lightRunning()
                && heavyDue(state, facts, now, cadence)) {
            return cadence.lightBudget() != null
                            && outByLightChecks(state)
                            && trialDue(loop.suspended(), loop.lastTrial(), now, cadence.lightInterval())
                    ? Start.TRIAL_THEN_HEAVY
                    : Start.HEAVY;
        }
        LightBudget budget = cadence.lightBudget();
        if (budget == null
                || facts.card() == null
                || !state.acceptsTraffic()
                || loop.lightRunning()
                || loop.heavyRunning()) {
            return Start.NOTHING;
        }
        boolean confirming =
                state instanceof EngineState.Degraded d && d.failing().containsKey(Check.GENERATION);
        Instant last = facts.lastLight();
        if (!confirming && last != null && now.isBefore(last.plus(cadence.lightInterval()))) {
            return Start.NOTHING;
        }
        if (!confirming && servedRecently(state, facts, now, cadence)) {
            // Gateway mode: client requests served whole within the interval are the proof a light check would give.
            return Start.NOTHING;
        }
        if (!waitsHoldingAThread(facts)) {
            return blind(facts) ? Start.LIGHT_WAITED_FOR : Start.LIGHT;
        }
        boolean byMetrics = facts.freshSample() != null;
        boolean putOffBefore = byMetrics ? facts.putOffSince() != null : facts.slotsPutOffSince() != null;
        if (!putOffBefore || last == null) {
            return byMetrics ? Start.PUT_OFF_BY_METRICS : Start.PUT_OFF_BY_SLOTS;
        }
        Duration wouldWait = budget.of(byMetrics ? facts.putOffSince() : null, facts.speed());
        Duration window = wouldWait.compareTo(cadence.lightInterval()) > 0 ? wouldWait : cadence.lightInterval();
        if (now.isBefore(last.plus(window))) {
            return Start.NOTHING;
        }
        return byMetrics ? Start.JUDGED_BY_METRICS : Start.JUDGED_BY_SLOTS;
    }

    /**
     * Whether client traffic proved the engine generates within the last {@code generation.interval}, with no request
     * it failed since (gateway mode): a light check would tell nothing more. Not while the traffic check itself is
     * failing.
     */
    static boolean servedRecently(EngineState state, EngineFacts facts, Instant now, Cadence cadence) {
        Instant served = facts.servedAt();
        return served != null
                && now.isBefore(served.plus(cadence.lightInterval()))
                && !(state instanceof EngineState.Degraded d && d.failing().containsKey(Check.TRAFFIC));
    }

    /**
     * Whether the heavy probes are due: as soon as the model is listed and while verifying; again after {@code
     * heavy-retry-interval} while a verification fails (not latched), while a failed one degrades a ready engine (to
     * confirm or clear it), and on a start held in a restart loop once it stayed up long enough; on a ready engine
     * as {@link #readyHeavyDue} says.
     */
    static boolean heavyDue(EngineState state, EngineFacts facts, Instant now, Cadence cadence) {
        Duration retry = cadence.heavyRetryInterval();
        return switch (state) {
            case EngineState.ModelListed m -> true;
            case EngineState.Verifying v -> true;
            case EngineState.VerificationFailed f -> !f.latched() && elapsed(facts, now, retry);
            case EngineState.NotReady n -> !n.latched() && elapsed(facts, now, retry);
            // Degraded by a verification: retried to confirm or clear (the other checks clear themselves).
            case EngineState.Degraded d -> d.failing().containsKey(Check.VERIFICATION) && elapsed(facts, now, retry);
            case EngineState.Ready r -> readyHeavyDue(facts, now, cadence.heavyInterval());
            // Held in a restart loop: verified again once the start has stayed up long enough.
            case EngineState.Held h -> !now.isBefore(h.until()) && elapsed(facts, now, retry);
            default -> false;
        };
    }

    /**
     * A ready engine's heavy probes: every {@code heavy-interval} while it is idle; while it is busy or real traffic
     * succeeds they are deferred, by at most another interval (the light checks verify it meanwhile), then they run
     * under load, where a timeout with progress is busy and latency objectives do not apply. Evidence from traffic
     * defers verification, never replaces it.
     */
    private static boolean readyHeavyDue(EngineFacts facts, Instant now, Duration heavyInterval) {
        if (!elapsed(facts, now, heavyInterval)) {
            return false;
        }
        return (idle(facts) && !trafficProvesHealth(facts)) || elapsed(facts, now, heavyInterval.multipliedBy(2));
    }

    private static boolean elapsed(EngineFacts facts, Instant now, Duration interval) {
        Instant last = facts.lastHeavy();
        return last == null || !now.isBefore(last.plus(interval));
    }

    /**
     * No request running or waiting (or no way to know: a stale sample says nothing of now). Without usable
     * {@code /metrics}, llama-server's {@code /slots} of this cycle: a slot held is work.
     */
    static boolean idle(EngineFacts facts) {
        EngineMetricsSample sample = facts.freshSample();
        if (sample == null || !facts.capabilities().metrics()) {
            SlotsSample slots = facts.slots();
            return slots == null || slots.processing() == 0;
        }
        return zero(sample.requestsRunning()) && zero(sample.requestsWaiting());
    }

    /** Real requests finished successfully since the last heavy probe (beyond readygate's own light checks). */
    static boolean trafficProvesHealth(EngineFacts facts) {
        Double before = facts.successesAtLastHeavy();
        Double now = facts.successes();
        int ownLight = facts.lightChecks() - facts.lightChecksAtLastHeavy();
        return before != null && now != null && now - before > OWN_REQUESTS_PER_VERIFICATION + ownLight;
    }

    /** Whether the engine is out for what a light check sees (it failed, timed out or stalled), not latched. */
    static boolean outByLightChecks(EngineState state) {
        return state instanceof EngineState.NotReady n
                && !n.latched()
                && (n.cause() == Reason.GENERATION_FAILED
                        || n.cause() == Reason.GENERATION_TIMED_OUT
                        || n.cause() == Reason.GENERATION_STALLED);
    }

    /** Whether a suspended engine's trial is due: suspended, and none ran within {@code interval}. */
    static boolean trialDue(boolean suspended, @Nullable Instant last, Instant now, Duration interval) {
        return suspended && (last == null || !now.isBefore(last.plus(interval)));
    }

    /**
     * Whether readygate cannot see a taken slot of this engine: one that gives each connection a thread (llama-server),
     * with no usable {@code /metrics} and no {@code /slots} this cycle. A light check sent there may wait in the server's
     * queue for a slot a client holds, and giving it up would not free the thread it holds there (the server keeps it
     * until the slot frees): it is waited for to its end, and no other is sent beside it.
     */
    static boolean blind(EngineFacts facts) {
        EngineSurface surface = facts.capabilities().surface();
        return surface != null
                && !surface.dialect().connectionsCostNoThread()
                && facts.freshSample() == null
                && facts.slots() == null;
    }

    /**
     * Whether a light check would only wait for a slot while holding one of the server's few HTTP threads: on an
     * engine that gives each connection a thread (llama-server) whose latest scrape shows every slot taken
     * ({@code llamacpp:requests_processing} at its {@code total_slots}) or a request waiting. Its answer would be busy
     * at best; the thread it holds (until the slot frees, even after readygate gave up on it) is one that
     * {@code /health}, the kubelet or a client needs. It is put off to the first cycle whose scrape shows a free slot.
     * Without usable {@code /metrics}, llama-server's {@code /slots} tells the same (every slot {@code is_processing}).
     */
    static boolean waitsHoldingAThread(EngineFacts facts) {
        EngineSurface surface = facts.capabilities().surface();
        EngineMetricsSample sample = facts.freshSample();
        if (surface == null || surface.dialect().connectionsCostNoThread()) {
            return false;
        }
        if (sample == null) {
            // No /metrics: llama-server's /slots, where it answers.
            return facts.slots() != null && facts.slots().full();
        }
        boolean waiting = sample.requestsWaiting() != null && sample.requestsWaiting() > 0;
        boolean full = surface.slots() != null
                && sample.requestsRunning() != null
                && sample.requestsRunning() >= surface.slots();
        return waiting || full;
    }

    private static boolean zero(@Nullable Double value) {
        return value == null || value == 0;
    }
}
