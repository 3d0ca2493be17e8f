package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * How long a light check (the generation check, or the canary in its place) waits for its answer: the pure rule. It
 * follows the engine's own speed, as this start's latest passed representative probe, or generation check on an idle
 * engine, measured it ({@link EngineFacts#speed()}), so that a CPU engine many times slower than a GPU is not taken for
 * hung:
 *
 * <ul>
 *   <li><b>idle</b>: {@value #MARGIN} × (the probe's time to first token × the check's prompt tokens / the probe's
 *       prompt tokens + the check's output tokens × the probe's mean inter-token latency), between {@code floor} and
 *       {@code ceiling}; {@code floor} before any measurement. Prefill scales with the prompt, so a check of a few
 *       tokens is not given the time of the probe's 512; one inter-token gap a token (the first included) is what
 *       generating and sending it costs. A probe that generated one token has no gap: its whole time to first token
 *       stands for one.
 *   <li><b>busy</b>: the idle budget once more for each request waiting in the engine's queue, at most {@code ceiling}.
 *   <li><b>without {@code /metrics}</b>: {@code ceiling} (no telling busy from broken).
 * </ul>
 *
 * @param floor {@code generation.timeout}: a GPU's budget, and the least a check ever gets
 * @param ceiling {@code heavy-timeout}: the most a check ever waits
 */
record GenerationBudget(Duration floor, Duration ceiling) {

    /** How many times its measured time a check may take: room for a loaded machine and a request's jitter. */
    static final int MARGIN = 4;

    /** The budget on an idle engine: what the measured speed gives, or {@code floor} with no measurement. */
    Duration idle(EngineFacts.@Nullable Speed speed, EngineLoad.OwnTokens tokens) {
        if (speed == null) {
            return floor;
        }
        long ttft = speed.timeToFirstToken().toNanos();
        long step = speed.interTokenLatency().isZero()
                ? ttft
                : speed.interTokenLatency().toNanos();
        long prefill = (long) ((double) ttft * tokens.prompt() / Math.max(1, speed.promptTokens()));
        Duration measured = Duration.ofNanos(MARGIN * (prefill + tokens.output() * step));
        return clamp(measured);
    }

    /**
     * The budget of a check sent now.
     *
     * @param before the engine's metrics from before (null without {@code /metrics})
     */
    Duration of(@Nullable EngineMetricsSample before, EngineFacts.@Nullable Speed speed, EngineLoad.OwnTokens tokens) {
        if (before == null) {
            return ceiling;
        }
        double waiting = before.requestsWaiting() == null ? 0 : Math.max(0, before.requestsWaiting());
        Duration budget = idle(speed, tokens).multipliedBy(1 + (long) Math.ceil(Math.min(waiting, 10_000)));
        return budget.compareTo(ceiling) > 0 ? ceiling : budget;
    }

    /** Where an idle budget comes from, for the check's detail. */
    static String source(EngineFacts.@Nullable Speed speed) {
        return speed == null ? "generation.timeout" : "the measured speed";
    }

    private Duration clamp(Duration value) {
        if (value.compareTo(floor) < 0) {
            return floor;
        }
        return value.compareTo(ceiling) > 0 ? ceiling : value;
    }
}
