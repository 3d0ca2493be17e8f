package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What readygate learned about the current engine start: its model card, its vLLM version, and its metrics (the
 * first scrape after the start, which tells a snapshot restore by its non-zero counters, and the latest). Forgotten
 * when the engine goes away or restarts. Written by the probe schedule, read by restart tracking and {@code /status}.
 */
public final class EngineFacts {

    private volatile @Nullable ModelCard card;
    private volatile @Nullable String vllmVersion;
    private volatile @Nullable EngineMetricsSample firstSample;
    private volatile @Nullable EngineMetricsSample lastSample;

    public @Nullable ModelCard card() {
        return card;
    }

    public @Nullable String vllmVersion() {
        return vllmVersion;
    }

    /** The first metrics scrape of this engine start. */
    public @Nullable EngineMetricsSample firstSample() {
        return firstSample;
    }

    public @Nullable EngineMetricsSample lastSample() {
        return lastSample;
    }

    void card(ModelCard value) {
        card = value;
    }

    void vllmVersion(String value) {
        vllmVersion = value;
    }

    synchronized void scraped(EngineMetricsSample sample, Instant at) {
        if (firstSample == null) {
            firstSample = sample;
        }
        lastSample = sample;
    }

    synchronized void forget() {
        card = null;
        vllmVersion = null;
        firstSample = null;
        lastSample = null;
    }
}
