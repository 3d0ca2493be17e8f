package dev.readygate.simulator;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One engine process: what a single start created and what dies with it (metrics, prefix cache, warm-up count).
 *
 * @param number the how-many-th start since the simulator started (1 for the first)
 * @param requestedPath the path asked for
 * @param path the path taken (a preload hit that found no usable cache falls back)
 * @param fallbackReason the reason in vLLM's fallback warning, or null
 * @param pid the API server's process id
 * @param processStart when the process started ({@code process_start_time_seconds})
 * @param servedCheckpoint the checkpoint whose weights the engine serves
 * @param served how many inference requests reached generation planning (the first {@code warmup-requests} pay the
 *     warm-up penalty)
 * @param warmedUpAt when the last warm-up request was admitted (null until then, and with no warm-up configured): from
 *     then on a request pays no warm-up penalty
 * @param batch the sequences of the batch ({@code max-num-seqs}); requests beyond them wait
 * @param sleep sleep mode's state: asleep or awake, and whether the weights still answer as the checkpoint's
 * @param healthFrom when {@code /health} answers 200 from (SGLang's warmup answers 503 before; a vLLM start at once)
 */
record EngineInstance(
        int number,
        StartupPath requestedPath,
        StartupPath path,
        @Nullable String fallbackReason,
        int pid,
        Instant processStart,
        String servedCheckpoint,
        EngineMetrics metrics,
        PrefixCache prefixCache,
        AtomicInteger served,
        AtomicReference<@Nullable Instant> warmedUpAt,
        BatchSlots batch,
        EngineSleep sleep,
        Instant healthFrom) {

    /**
     * The checkpoint whose answers the engine gives now: the wrong-weights fault swaps in another one, and weights a
     * sleep discarded answer as none.
     */
    String answeringCheckpoint(FaultSet faults, String wrongCheckpoint) {
        return sleep.answering(faults.has(Fault.WRONG_WEIGHTS) ? wrongCheckpoint : servedCheckpoint);
    }
}
