package dev.readygate.simulator;

import java.time.Duration;

/**
 * How long an engine takes: time to first token grows with the prompt tokens the prefix cache does not hold, each
 * output token takes the decode time, both stretched by the requests running beside it (continuous batching) and by
 * the {@code slow} fault; the first requests after a start pay the warm-up penalty (lazy compilation).
 */
record LatencyModel(SimulatorProperties.Timing timing) {

    Duration timeToFirstToken(int promptTokens, int cachedTokens, int running, boolean warmup, double slowFactor) {
        Duration prefill = timing.prefillPerToken().multipliedBy(Math.max(0, promptTokens - cachedTokens));
        Duration ttft = stretch(timing.ttftBase().plus(prefill), running, slowFactor);
        return warmup ? ttft.plus(timing.warmupPenalty()) : ttft;
    }

    Duration interTokenLatency(int running, double slowFactor) {
        return stretch(timing.decodePerToken(), running, slowFactor);
    }

    private Duration stretch(Duration duration, int running, double slowFactor) {
        double batching = 1 + timing.batchSlowdown() * Math.max(0, running - 1);
        return Duration.ofNanos(Math.round(duration.toNanos() * batching * slowFactor));
    }
}
