package dev.readygate.probe;

import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.SlotsSample;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What a probe that got no (further) answer in time means: a probe waiting behind real traffic is not a failure. The
 * engine's metrics are read again and compared with those from before the probe ({@link EngineLoad}): other work
 * progressing is {@code busy} (neither pass nor failure); requests running or waiting with no progress is a stall, and
 * so is a vLLM engine that advanced its other requests while the probe's own stream stopped; an idle engine that did
 * not answer timed out. Without {@code /metrics}, llama-server's {@code /slots} read again tells a probe that waited for
 * a slot every request held. Without either there is no telling: a heavy probe of an engine in service that got no
 * event in time is taken as waiting for a slot a client holds ({@code busy}: the light checks of such an engine are
 * waited for to their end and take a hung one out, see {@code ProbeSchedule}); any other such timeout is a failure.
 */
final class TimeoutVerdict {

    /** The reasons a kind of probe fails with when it stalls, and when it timed out on an idle engine. */
    record Reasons(Reason stalled, Reason timedOut) {

        /** The heavy probes' ({@code stalled}, {@code timed_out}). */
        static final Reasons HEAVY = new Reasons(Reason.STALLED, Reason.TIMED_OUT);

        /** The generation check's ({@code generation_stalled}, {@code generation_timed_out}). */
        static final Reasons GENERATION = new Reasons(Reason.GENERATION_STALLED, Reason.GENERATION_TIMED_OUT);
    }

    private final EngineClient client;
    private final EngineFactsHolder facts;
    private final Clock clock;

    TimeoutVerdict(EngineClient client, EngineFactsHolder facts, Clock clock) {
        this.client = client;
        this.facts = facts;
        this.clock = clock;
    }

    /**
     * The report of a {@code kind} probe whose call failed with {@code timeout} ({@code TIMED_OUT} or {@code
     * STALLED}).
     *
     * @param before the engine's metrics from before the probe (null without {@code /metrics})
     * @param ownTokens the tokens the probe itself may have added to the engine's counters
     */
    Mono<ProbeReport> judge(
            ProbeKind kind,
            EngineFailure timeout,
            @Nullable EngineMetricsSample before,
            EngineLoad.OwnTokens ownTokens,
            Reasons reasons) {
        Reason own = timeout.kind() == EngineFailure.Kind.STALLED ? reasons.stalled() : reasons.timedOut();
        if (before == null || !facts.current().capabilities().metrics()) {
            if (slotsOffered() && timeout.kind() == EngineFailure.Kind.TIMED_OUT) {
                return bySlots(kind, timeout, own, reasons);
            }
            if (queuedUnseen(timeout, reasons)) {
                return Mono.fromSupplier(() -> ProbeReport.busy(
                        kind,
                        clock.instant(),
                        timeout.detail() + " on an engine in service that shows neither /metrics nor /slots: taken as"
                                + " waiting for a slot a client holds (the light checks, waited for to their end, take"
                                + " a hung engine out)"));
            }
            return Mono.fromSupplier(() -> ProbeReport.failed(kind, clock.instant(), own, timeout.detail()));
        }
        return client.metrics().map(call -> {
            if (!(call instanceof EngineCall.Success<EngineMetricsSample> success)) {
                return ProbeReport.failed(kind, clock.instant(), own, timeout.detail());
            }
            EngineMetricsSample after = success.value();
            Integer sleepLevel = after.sleepLevel();
            if (sleepLevel != null && sleepLevel > 0) {
                // vLLM queues a request to a sleeping engine until it wakes: not the engine's failure.
                return ProbeReport.busy(
                        kind,
                        clock.instant(),
                        timeout.detail() + " while the engine sleeps (" + CheapChecks.sleepDetail(sleepLevel) + ")");
            }
            double running = after.requestsRunning() == null ? 0 : after.requestsRunning();
            double waiting = after.requestsWaiting() == null ? 0 : after.requestsWaiting();
            String progress = EngineLoad.progress(before, after);
            return switch (EngineLoad.afterTimeout(
                    before, after, ownTokens, timeout.kind() == EngineFailure.Kind.STALLED)) {
                case BUSY ->
                    ProbeReport.busy(
                            kind,
                            clock.instant(),
                            "%s while the engine was busy: %.0f requests running, %.0f waiting, %s meanwhile"
                                    .formatted(timeout.detail(), running, waiting, progress));
                case STALLED ->
                    ProbeReport.failed(
                            kind,
                            clock.instant(),
                            reasons.stalled(),
                            "%s with %.0f requests running, %.0f waiting and no progress of them (%s meanwhile)"
                                    .formatted(timeout.detail(), running, waiting, progress));
                case LEFT_OUT ->
                    ProbeReport.failed(
                            kind,
                            clock.instant(),
                            reasons.stalled(),
                            "%s while the engine advanced its other requests (%s meanwhile, no preemption)"
                                    .formatted(timeout.detail(), progress));
                case IDLE -> ProbeReport.failed(kind, clock.instant(), own, timeout.detail());
            };
        });
    }

    /**
     * A heavy probe that got no event in time from an engine in service where readygate cannot see a taken slot
     * ({@link DueNow#blind}): it may wait in the engine's queue behind a client, which no reading can tell.
     */
    private boolean queuedUnseen(EngineFailure timeout, Reasons reasons) {
        return reasons == Reasons.HEAVY
                && timeout.kind() == EngineFailure.Kind.TIMED_OUT
                && DueNow.blind(facts.current())
                && facts.inService();
    }

    /** llama-server that answers {@code /slots} (no usable {@code /metrics}). */
    private boolean slotsOffered() {
        EngineFacts current = facts.current();
        EngineSurface surface = current.capabilities().surface();
        return surface != null && surface.dialect() == EngineDialect.LLAMA_CPP && current.slotsOffered();
    }

    /**
     * Without {@code /metrics}, on llama-server's {@code /slots} read again: a probe that got no event in time while
     * every slot is taken by requests that advance (or one that took a slot since the latest reading before) was
     * waiting for a slot, busy; taken slots that advance no more are a stall; a free slot, or no answer, leaves the
     * timeout the probe's own.
     */
    private Mono<ProbeReport> bySlots(ProbeKind kind, EngineFailure timeout, Reason own, Reasons reasons) {
        SlotsSample latest = facts.current().slots();
        return client.slots().map(call -> {
            if (!(call instanceof EngineCall.Success<SlotsSample> success)) {
                return ProbeReport.failed(kind, clock.instant(), own, timeout.detail());
            }
            SlotsSample after = success.value();
            String slots = "every slot taken (%d of %d processing, as /slots says)"
                    .formatted(after.processing(), after.slots().size());
            return switch (EngineLoad.slotsAfterTimeout(latest, after)) {
                case STALLED ->
                    ProbeReport.failed(
                            kind,
                            clock.instant(),
                            reasons.stalled(),
                            "%s with %s and the requests in them advancing no more".formatted(timeout.detail(), slots));
                case IDLE -> ProbeReport.failed(kind, clock.instant(), own, timeout.detail());
                default ->
                    ProbeReport.busy(
                            kind,
                            clock.instant(),
                            "%s while waiting for a slot: %s, their requests advancing"
                                    .formatted(timeout.detail(), slots));
            };
        });
    }
}
