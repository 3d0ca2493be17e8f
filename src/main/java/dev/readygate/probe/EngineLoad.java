package dev.readygate.probe;

import dev.readygate.engine.EngineMetricsSample;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's metrics say about its other work between two scrapes: progress of real traffic is evidence that
 * the engine is busy, not broken. Progress is its generated and prompt tokens moving (vLLM's
 * {@code vllm:generation_tokens_total} and {@code vllm:prompt_tokens_total}, SGLang's and TGI's alike), or llama.cpp's
 * decode steps ({@code llamacpp:n_decode_total}: llama-server adds to its token counters only when a request ends);
 * work is requests running or waiting. Pure.
 */
enum EngineLoad {
    /** Nothing else runs or waits. */
    IDLE,
    /** Other requests run or wait, and the engine made progress beyond the probe's own tokens. */
    BUSY,
    /** Requests run or wait, and the engine made no progress. */
    STALLED;

    /**
     * The engine's other work from {@code before} to {@code after}.
     *
     * @param ownTokens tokens the probe itself may have added to the counters (not progress of other work)
     */
    static EngineLoad between(@Nullable EngineMetricsSample before, EngineMetricsSample after, double ownTokens) {
        boolean working = positive(after.requestsRunning()) || positive(after.requestsWaiting());
        if (!working) {
            return IDLE;
        }
        if (before == null) {
            return STALLED;
        }
        double progress = delta(before.generationTokens(), after.generationTokens())
                + delta(before.promptTokens(), after.promptTokens());
        // llama.cpp's decode steps: a probe waiting behind another request adds none of its own (at most one to
        // evaluate its prompt, one per token it generated).
        double steps = delta(before.decodeSteps(), after.decodeSteps());
        return progress > ownTokens || steps > ownTokens ? BUSY : STALLED;
    }

    /** Whether a sample shows other requests running or waiting (the probe's own not yet counted). */
    static boolean working(@Nullable EngineMetricsSample sample) {
        return sample != null && (positive(sample.requestsRunning()) || positive(sample.requestsWaiting()));
    }

    private static boolean positive(@Nullable Double value) {
        return value != null && value > 0;
    }

    private static double delta(@Nullable Double before, @Nullable Double after) {
        return before == null || after == null ? 0 : Math.max(0, after - before);
    }
}
