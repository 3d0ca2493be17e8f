package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The light checks of an engine that serves, between the heavy probes: the generation check, and every {@code
 * canary-every}-th time the canary instead, each turned into one readiness observation of its own
 * ({@link Check#GENERATION}: {@code generation_failed}, {@code generation_timed_out}, {@code generation_stalled}; a
 * canary mismatch is latched, as in a verification). Not behind the heavy probes' circuit breaker or token budget:
 * their cost is fixed by their cadence.
 */
final class LightChecks {

    private final ReadygateProperties.Generation config;
    private final GenerationCheck generation;
    private final @Nullable CanaryProbe canary;
    private final ProbeHistory history;
    private final Consumer<ProbeReport> listener;

    LightChecks(
            ReadygateProperties.Generation config,
            GenerationCheck generation,
            @Nullable CanaryProbe canary,
            ProbeHistory history,
            Consumer<ProbeReport> listener) {
        this.config = config;
        this.generation = generation;
        this.canary = canary;
        this.history = history;
        this.listener = listener;
    }

    /** Whether the {@code count}-th light check (from 0) of a start is the canary. */
    boolean canaryTurn(int count) {
        int every = config.canaryEvery();
        return canary != null && every > 0 && count % every == every - 1;
    }

    /** How long a light check sent now would wait for its answer ({@link GenerationCheck#budget}). */
    Duration budget(@Nullable EngineMetricsSample before) {
        return generation.budget(before);
    }

    /** How long a light check sent now would wait for its answer on an engine of {@code speed}. */
    Duration budget(@Nullable EngineMetricsSample before, EngineFacts.@Nullable Speed speed) {
        return generation.budget(before, speed);
    }

    /** The tokens one light check spends at most (the dearer of the two). */
    int tokenCost() {
        return Math.max(generation.tokenCost(), canary == null ? 0 : canary.tokenCost());
    }

    /**
     * Runs the {@code count}-th light check of the start.
     *
     * @param before the engine's metrics from before (null without {@code /metrics})
     */
    Mono<Observation> run(int count, ModelCard card, String vllmVersion, @Nullable EngineMetricsSample before) {
        return run(count, card, vllmVersion, before, null);
    }

    /**
     * Runs the {@code count}-th light check of the start, waiting for its answer up to {@code wait} instead of its
     * budget where one is given ({@link #waiting}).
     */
    Mono<Observation> run(
            int count,
            ModelCard card,
            String vllmVersion,
            @Nullable EngineMetricsSample before,
            @Nullable Duration wait) {
        CanaryProbe turn = canaryTurn(count) ? canary : null;
        Mono<ProbeReport> check = turn != null
                ? turn.run(card, vllmVersion, before, wait != null ? wait : generation.budget(before, turn.ownTokens()))
                : generation.run(card, before, wait);
        return check.doOnNext(this::record).map(LightChecks::observation);
    }

    /**
     * A light check still waiting for its answer after {@code waited}, on an engine where readygate cannot see a taken
     * slot (llama-server with neither {@code /metrics} nor {@code /slots}): it may be waiting in the server's queue
     * for a slot a client holds, or the engine may hang, and nothing tells which. Up to {@code longest}
     * ({@code heavy-interval}) it is busy, neither pass nor failure; past it, {@code generation_timed_out} (a client's
     * request holding the only slot that long is taken for a hang).
     */
    Observation waiting(Duration waited, Duration longest, Instant at) {
        String waiting = "no answer yet after %d s; neither /metrics nor /slots, so readygate cannot tell a check"
                        .formatted(waited.toSeconds())
                + " waiting for a slot a client holds from a hang: it waits for this one to end and sends no other"
                + " beside it";
        ProbeReport report = waited.compareTo(longest) <= 0
                ? ProbeReport.busy(
                        ProbeKind.GENERATION,
                        at,
                        waiting + " (busy up to heavy-interval, " + longest.toSeconds() + " s)")
                : ProbeReport.failed(
                        ProbeKind.GENERATION,
                        at,
                        Reason.GENERATION_TIMED_OUT,
                        waiting + ", and it has waited past heavy-interval (" + longest.toSeconds() + " s)");
        record(report);
        return observation(report);
    }

    /**
     * The trial of an engine whose heavy probes are suspended, not a light check of an engine that serves: the
     * generation check, recorded as one; whether it passed (the engine generates again). Its failure is no news to
     * readiness (the engine is out already) and is not applied.
     */
    Mono<Boolean> trial(ModelCard card, @Nullable EngineMetricsSample before) {
        return generation.run(card, before).doOnNext(this::record).map(ProbeReport::passed);
    }

    /**
     * A light check put off because every llama-server slot stays taken, judged from the engine's metrics alone: its
     * decode steps moved since {@code since} ({@code over} ago), or the requests in its slots advance no more. Null
     * without decode steps in both scrapes (nothing else tells a long request from a stall there).
     */
    @Nullable
    Observation putOff(EngineMetricsSample since, EngineMetricsSample now, Duration over, Instant at) {
        Double from = since.decodeSteps();
        Double to = now.decodeSteps();
        if (from == null || to == null) {
            return null;
        }
        String slots = "light check put off, every slot taken (%.0f requests processing, %.0f deferred): "
                .formatted(
                        now.requestsRunning() == null ? 0 : now.requestsRunning(),
                        now.requestsWaiting() == null ? 0 : now.requestsWaiting());
        long seconds = Math.max(0, over.toSeconds());
        ProbeReport report = switch (EngineLoad.between(since, now, NOTHING_OF_ITS_OWN)) {
            case STALLED ->
                ProbeReport.failed(
                        ProbeKind.GENERATION,
                        at,
                        Reason.GENERATION_STALLED,
                        slots + "no decode step in " + seconds + " s, the requests in its slots advance no more");
            default ->
                ProbeReport.busy(
                        ProbeKind.GENERATION,
                        at,
                        slots + "%.0f decode steps in %d s".formatted(Math.max(0, to - from), seconds));
        };
        record(report);
        return observation(report);
    }

    /**
     * A light check put off because every llama-server slot stays taken, judged from {@code /slots} alone (no usable
     * {@code /metrics}): the requests in its slots generated tokens or ended since {@code since} ({@code over} ago), or
     * advance no more ({@link EngineLoad#betweenSlots}).
     */
    Observation putOff(SlotsSample since, SlotsSample now, Duration over, Instant at) {
        String slots = "light check put off, every slot taken (%d of %d processing, as /slots says): "
                .formatted(now.processing(), now.slots().size());
        long seconds = Math.max(0, over.toSeconds());
        ProbeReport report = switch (EngineLoad.betweenSlots(since, now)) {
            case STALLED ->
                ProbeReport.failed(
                        ProbeKind.GENERATION,
                        at,
                        Reason.GENERATION_STALLED,
                        slots + "no token generated in " + seconds + " s, the requests in its slots advance no more");
            default ->
                ProbeReport.busy(
                        ProbeKind.GENERATION,
                        at,
                        slots
                                + "%d tokens generated in %d s"
                                        .formatted(EngineLoad.decodedBetween(since, now), seconds));
        };
        record(report);
        return observation(report);
    }

    /** A check put off sent nothing: no token is its own. */
    private static final EngineLoad.OwnTokens NOTHING_OF_ITS_OWN = new EngineLoad.OwnTokens(0, 0);

    private void record(ProbeReport report) {
        history.record(report);
        listener.accept(report);
    }

    /** A light check's report as what readiness makes of it. */
    static Observation observation(ProbeReport report) {
        String prefix = report.kind() == ProbeKind.CANARY ? "canary (generation check): " : "generation check: ";
        return switch (report.outcome()) {
            case PASSED -> new Observation.Generated(report.at(), prefix + report.detail());
            case BUSY -> new Observation.Busy(report.at(), prefix + report.detail());
            case FAILED -> failed(report, prefix);
        };
    }

    private static Observation failed(ProbeReport report, String prefix) {
        Reason reason = report.reason() == null ? Reason.GENERATION_FAILED : report.reason();
        return switch (reason) {
            case ENGINE_DOWN -> new Observation.Unreachable(report.at(), reason, prefix + report.detail());
            case CANARY_MISMATCH ->
                new Observation.VerificationFailed(report.at(), reason, prefix + report.detail(), report.latched());
            case GENERATION_FAILED, GENERATION_TIMED_OUT, GENERATION_STALLED, OVERLONG_STREAM ->
                new Observation.CheckFailed(report.at(), Check.GENERATION, reason, prefix + report.detail());
            case TIMED_OUT ->
                new Observation.CheckFailed(
                        report.at(), Check.GENERATION, Reason.GENERATION_TIMED_OUT, prefix + report.detail());
            case STALLED ->
                new Observation.CheckFailed(
                        report.at(), Check.GENERATION, Reason.GENERATION_STALLED, prefix + report.detail());
            default ->
                new Observation.CheckFailed(
                        report.at(),
                        Check.GENERATION,
                        Reason.GENERATION_FAILED,
                        prefix + reason.value() + ": " + report.detail());
        };
    }
}
