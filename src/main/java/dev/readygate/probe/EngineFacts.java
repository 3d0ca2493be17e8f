package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * What readygate learned about one engine start, as one immutable value: its model card, its vLLM version, its metrics
 * (the first scrape of the start, which tells a snapshot restore by its non-zero counters, and the latest, and what of
 * them is lost), which endpoints it has (what discovery found, and what the probes learned since), and when the heavy
 * probes last ran on it. A new start
 * begins with {@link #fresh}: nothing is forgotten, the value is swapped ({@link EngineFactsHolder}). Written by the
 * probes, read by restart tracking, metrics and {@code /status}.
 *
 * @param startId the engine start these facts are of (empty for none)
 * @param card the model card {@code /v1/models} listed
 * @param vllmVersion what {@code /version} said ({@code unknown} without it)
 * @param firstSample the first usable {@code /metrics} scrape of this start
 * @param lastSample the latest usable scrape (one that failed or had none of the series readygate reads is not kept:
 *     {@code metricsEvidence} says so)
 * @param lastSampleAt when the latest usable scrape was answered
 * @param capabilities what the engine offers (its dialect and endpoints, as discovery found them)
 * @param lastHeavy when the heavy probes last ran
 * @param successesAtLastHeavy {@code vllm:request_success_total} then
 * @param cyclesSinceVersion cheap-check cycles since {@code /version} was last read
 * @param metricsEvidence what the scrapes of this start give restart and busy detection, and what of it is lost
 * @param lastLight when the last light check (generation check or canary) started
 * @param lightChecks how many light checks ran on this start (every {@code canary-every}-th is the canary)
 * @param lightChecksAtLastHeavy {@code lightChecks} when the heavy probes last ran (their successes are readygate's
 *     own, not real traffic's)
 * @param putOffSince the scrape a light check was last put off at, while every llama-server slot was taken: the next
 *     one put off is judged against it from the engine's metrics alone; null once a light check ran
 * @param speed what the latest passed representative probe of this start, or its latest generation check that passed
 *     on an idle engine, measured: the light checks' budget follows it ({@link GenerationBudget}); null before one
 *     passed
 * @param slots llama-server's {@code /slots} as this cycle read it, where {@code /metrics} is not usable; null when not
 *     read or when the read failed (a stale answer says nothing of now)
 * @param slotsOffered false once {@code /slots} answered that this server does not offer it
 * @param slotsPutOffSince {@code /slots} when a light check was last put off on its evidence; null once one ran
 * @param servedAt gateway mode: when the latest client request served whole ended that proves the engine generates
 *     (no failed request after it); the light checks are put off while it is recent. Null without such traffic
 */
public record EngineFacts(
        String startId,
        @Nullable ModelCard card,
        @Nullable String vllmVersion,
        @Nullable EngineMetricsSample firstSample,
        @Nullable EngineMetricsSample lastSample,
        @Nullable Instant lastSampleAt,
        EngineCapabilities capabilities,
        @Nullable Instant lastHeavy,
        @Nullable Double successesAtLastHeavy,
        int cyclesSinceVersion,
        MetricsEvidence metricsEvidence,
        @Nullable Instant lastLight,
        int lightChecks,
        int lightChecksAtLastHeavy,
        @Nullable EngineMetricsSample putOffSince,
        @Nullable Speed speed,
        @Nullable SlotsSample slots,
        boolean slotsOffered,
        @Nullable SlotsSample slotsPutOffSince,
        @Nullable Instant servedAt) {

    /**
     * How fast this engine generates, as a probe measured it on this start.
     *
     * @param promptTokens the probe's prompt tokens (the engine's count)
     * @param timeToFirstToken its time to first token: the prompt's prefill, and what a request costs at all
     * @param interTokenLatency its mean gap between two tokens (zero when it generated one token only)
     */
    public record Speed(int promptTokens, Duration timeToFirstToken, Duration interTokenLatency) {}

    /** No engine start. */
    public static final EngineFacts NONE = fresh("");

    /** What is known of a start that just began: nothing yet. */
    public static EngineFacts fresh(String startId) {
        return new EngineFacts(
                startId,
                null,
                null,
                null,
                null,
                null,
                EngineCapabilities.ALL,
                null,
                null,
                0,
                MetricsEvidence.NONE,
                null,
                0,
                0,
                null,
                null,
                null,
                true,
                null,
                null);
    }

    EngineFacts withCard(ModelCard value) {
        return with(draft -> draft.card = value);
    }

    EngineFacts withVllmVersion(String value) {
        return with(draft -> draft.vllmVersion = value);
    }

    /** A scrape parsed at {@code at}: kept when it has any of the series readygate reads. */
    EngineFacts scraped(EngineMetricsSample sample, Instant at) {
        MetricsEvidence evidence = metricsEvidence.scraped(sample, at);
        return with(draft -> {
            draft.metricsEvidence = evidence;
            if (evidence.usable()) {
                draft.firstSample = firstSample == null ? sample : firstSample;
                draft.lastSample = sample;
                draft.lastSampleAt = at;
            }
        });
    }

    /** A scrape failed at {@code at}, as {@code why} says; the last usable sample stays, for what it was. */
    EngineFacts scrapeFailed(String why, Instant at) {
        return with(draft -> draft.metricsEvidence = metricsEvidence.failed(why, at));
    }

    /**
     * {@code vllm:request_success_total} as this start began, or null when unknown: its first scrape, unless scrapes
     * failed before the first usable one (by then real traffic may have been counted).
     */
    public @Nullable Double requestsAtFirstScrape() {
        return firstSample == null || metricsEvidence.firstScrapeMissed() ? null : firstSample.requestSuccess();
    }

    /**
     * The latest sample, when the latest scrape gave it: null while {@code /metrics} gives nothing usable, so a decision
     * on load (idle, busy) is not made on a stale sample.
     */
    @Nullable
    EngineMetricsSample freshSample() {
        return metricsEvidence.usable() ? lastSample : null;
    }

    EngineFacts withCapabilities(EngineCapabilities value) {
        return with(draft -> draft.capabilities = value);
    }

    EngineFacts withLastHeavy(Instant at) {
        return with(draft -> draft.lastHeavy = at);
    }

    EngineFacts withSuccessesAtLastHeavy(@Nullable Double value) {
        return with(draft -> {
            draft.successesAtLastHeavy = value;
            draft.lightChecksAtLastHeavy = lightChecks;
        });
    }

    /** A light check starts now. */
    EngineFacts withLightCheck(Instant at) {
        return with(draft -> {
            draft.lastLight = at;
            draft.lightChecks = lightChecks + 1;
            draft.putOffSince = null;
            draft.slotsPutOffSince = null;
        });
    }

    /** A light check due now is put off (every slot taken), and judged from {@code sample} and the next one on. */
    EngineFacts withLightCheckPutOff(Instant at, EngineMetricsSample sample) {
        return with(draft -> {
            draft.lastLight = at;
            draft.putOffSince = sample;
        });
    }

    /** A probe of this start passed, having measured {@code value}. */
    EngineFacts withSpeed(Speed value) {
        return with(draft -> draft.speed = value);
    }

    /** A light check due now is put off (every slot taken, as {@code /slots} says), and judged from {@code sample} on. */
    EngineFacts withLightCheckPutOff(Instant at, SlotsSample sample) {
        return with(draft -> {
            draft.lastLight = at;
            draft.slotsPutOffSince = sample;
        });
    }

    /** {@code /slots} as this cycle read it (null: not read, or the read failed). */
    EngineFacts withSlots(@Nullable SlotsSample value) {
        return with(draft -> draft.slots = value);
    }

    /** {@code /slots} answered that this server does not offer it: not asked again on this start. */
    EngineFacts withoutSlots() {
        return with(draft -> {
            draft.slots = null;
            draft.slotsOffered = false;
        });
    }

    /** Client traffic proved the engine generates, up to {@code at} (gateway mode). */
    public EngineFacts withServed(@Nullable Instant at) {
        return with(draft -> draft.servedAt = at);
    }

    /** {@code /version} is read now: the recheck count starts again. */
    EngineFacts withVersionRead() {
        return with(draft -> draft.cyclesSinceVersion = 0);
    }

    /** One more cheap-check cycle without reading {@code /version}. */
    EngineFacts withVersionCycle() {
        return with(draft -> draft.cyclesSinceVersion = cyclesSinceVersion + 1);
    }

    /** These facts with a change: a new part of them is a component here, in {@link Draft} and in its copy. */
    private EngineFacts with(Consumer<Draft> change) {
        Draft draft = new Draft(this);
        change.accept(draft);
        return new EngineFacts(
                startId,
                draft.card,
                draft.vllmVersion,
                draft.firstSample,
                draft.lastSample,
                draft.lastSampleAt,
                draft.capabilities,
                draft.lastHeavy,
                draft.successesAtLastHeavy,
                draft.cyclesSinceVersion,
                draft.metricsEvidence,
                draft.lastLight,
                draft.lightChecks,
                draft.lightChecksAtLastHeavy,
                draft.putOffSince,
                draft.speed,
                draft.slots,
                draft.slotsOffered,
                draft.slotsPutOffSince,
                draft.servedAt);
    }

    /** The facts being changed. */
    private static final class Draft {
        @Nullable
        ModelCard card;

        @Nullable
        String vllmVersion;

        @Nullable
        EngineMetricsSample firstSample;

        @Nullable
        EngineMetricsSample lastSample;

        @Nullable
        Instant lastSampleAt;

        EngineCapabilities capabilities;

        @Nullable
        Instant lastHeavy;

        @Nullable
        Double successesAtLastHeavy;

        int cyclesSinceVersion;

        MetricsEvidence metricsEvidence;

        @Nullable
        Instant lastLight;

        int lightChecks;

        int lightChecksAtLastHeavy;

        @Nullable
        EngineMetricsSample putOffSince;

        @Nullable
        Speed speed;

        @Nullable
        SlotsSample slots;

        boolean slotsOffered;

        @Nullable
        SlotsSample slotsPutOffSince;

        @Nullable
        Instant servedAt;

        Draft(EngineFacts facts) {
            card = facts.card;
            vllmVersion = facts.vllmVersion;
            firstSample = facts.firstSample;
            lastSample = facts.lastSample;
            lastSampleAt = facts.lastSampleAt;
            capabilities = facts.capabilities;
            lastHeavy = facts.lastHeavy;
            successesAtLastHeavy = facts.successesAtLastHeavy;
            cyclesSinceVersion = facts.cyclesSinceVersion;
            metricsEvidence = facts.metricsEvidence;
            lastLight = facts.lastLight;
            lightChecks = facts.lightChecks;
            lightChecksAtLastHeavy = facts.lightChecksAtLastHeavy;
            putOffSince = facts.putOffSince;
            speed = facts.speed;
            slots = facts.slots;
            slotsOffered = facts.slotsOffered;
            slotsPutOffSince = facts.slotsPutOffSince;
            servedAt = facts.servedAt;
        }
    }

    /** {@code vllm:request_success_total} at the latest scrape, when it gave it. */
    @Nullable
    Double successes() {
        EngineMetricsSample fresh = freshSample();
        return fresh == null ? null : fresh.requestSuccess();
    }
}
