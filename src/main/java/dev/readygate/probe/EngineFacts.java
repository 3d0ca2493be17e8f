package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What readygate learned about one engine start, as one immutable value: its model card, its vLLM version, its metrics
 * (the first scrape of the start, which tells a snapshot restore by its non-zero counters, and the latest), which
 * endpoints it has, the representative prompt calibrated for it, and when the heavy probes last ran on it. A new start
 * begins with {@link #fresh}: nothing is forgotten, the value is swapped ({@link EngineFactsHolder}). Written by the
 * probes, read by restart tracking, metrics and {@code /status}.
 *
 * @param startId the engine start these facts are of (empty for none)
 * @param card the model card {@code /v1/models} listed
 * @param vllmVersion what {@code /version} said ({@code unknown} without it)
 * @param firstSample the first {@code /metrics} scrape of this start
 * @param lastSample the latest scrape
 * @param capabilities which of vLLM's extra endpoints the engine has
 * @param calibration a prompt text whose token count the engine reported, for servers without {@code /tokenize}
 * @param lastHeavy when the heavy probes last ran (or were skipped because real traffic proved health)
 * @param successesAtLastHeavy {@code vllm:request_success_total} then
 * @param cyclesSinceVersion cheap-check cycles since {@code /version} was last read
 */
public record EngineFacts(
        String startId,
        @Nullable ModelCard card,
        @Nullable String vllmVersion,
        @Nullable EngineMetricsSample firstSample,
        @Nullable EngineMetricsSample lastSample,
        EngineCapabilities capabilities,
        @Nullable PromptCalibration calibration,
        @Nullable Instant lastHeavy,
        @Nullable Double successesAtLastHeavy,
        int cyclesSinceVersion) {

    /** No engine start. */
    public static final EngineFacts NONE = fresh("");

    /**
     * A representative prompt text whose token count the engine reported.
     *
     * @param plannedTokens the prompt tokens it was built for
     * @param text the text
     * @param tokens the prompt tokens the engine counted
     */
    public record PromptCalibration(int plannedTokens, String text, int tokens) {}

    /** What is known of a start that just began: nothing yet. */
    public static EngineFacts fresh(String startId) {
        return new EngineFacts(startId, null, null, null, null, EngineCapabilities.ALL, null, null, null, 0);
    }

    EngineFacts withCard(ModelCard value) {
        return new EngineFacts(
                startId,
                value,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts withVllmVersion(String value) {
        return new EngineFacts(
                startId,
                card,
                value,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts scraped(EngineMetricsSample sample) {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample == null ? sample : firstSample,
                sample,
                capabilities,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts withCapabilities(EngineCapabilities value) {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                value,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts withCalibration(PromptCalibration value) {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                value,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts withLastHeavy(Instant at) {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                at,
                successesAtLastHeavy,
                cyclesSinceVersion);
    }

    EngineFacts withSuccessesAtLastHeavy(@Nullable Double value) {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                lastHeavy,
                value,
                cyclesSinceVersion);
    }

    /** {@code /version} is read now: the recheck count starts again. */
    EngineFacts withVersionRead() {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                0);
    }

    /** One more cheap-check cycle without reading {@code /version}. */
    EngineFacts withVersionCycle() {
        return new EngineFacts(
                startId,
                card,
                vllmVersion,
                firstSample,
                lastSample,
                capabilities,
                calibration,
                lastHeavy,
                successesAtLastHeavy,
                cyclesSinceVersion + 1);
    }

    /** {@code vllm:request_success_total} at the latest scrape. */
    @Nullable
    Double successes() {
        return lastSample == null ? null : lastSample.requestSuccess();
    }
}
