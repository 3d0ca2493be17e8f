package dev.readygate.simulator;

import org.jspecify.annotations.Nullable;

/**
 * What a simulated engine writes to its log as a start, a stop, a failure or a sleep goes on: vLLM's lines
 * ({@link VllmLines}) or SGLang's ({@link SglangLines}), as {@code readygate.simulator.engine} says. The start's
 * timeline ({@link SimulatedEngine}) is the same for both; each engine writes the phases it logs and leaves out the ones
 * it does not ({@code core} is the first engine core's, or scheduler's, pid).
 */
interface EngineLines {

    /** How far apart two starts' first pids are. */
    int pidsPerStart();

    /** The API server's process name in its log prefix (empty where there is none). */
    String api();

    void header(int pid, String version, String model, String args);

    void initializing(int core, String version, String config);

    void startingToLoad(int core, String model);

    void loaded(int core, double totalLoadSeconds, double gib, double modelSeconds);

    void mapped(int core, int tensors, String mode, SimulatorProperties.Preload preload, double gib, double seconds);

    void cacheUnusable(int core, String reason);

    void compiling(int core, double dynamoSeconds, double graphSeconds);

    void graphsCaptured(int core, double seconds, double gib);

    void kvCache(int core, double kvGib, int kvTokens, int maxModelLen);

    void initEngine(int core, double seconds, double compilationSeconds);

    void serving(int pid, String url);

    /** The engine's own warmup request came back ({@code timing.sglang-warmup} after it listens; vLLM writes none). */
    void warmedUp();

    void shuttingDown(int pid);

    void startupFailure(int pid, String reason);

    void configError(int pid, @Nullable String hfToken);

    void fatalError(int pid, String reason);

    void restoreFailure(String error);

    void fellAsleep(int core, double freedGib, double backedUpGib, double stillInUseGib, double seconds);

    void alreadySleeping(int core);

    void wakeRequested(int pid, String tags);

    void wokeUp(int core, double seconds, String tags);

    void notSleeping(int core);

    void tagNotSleeping(int core, String tag, String sleepingTags);
}
