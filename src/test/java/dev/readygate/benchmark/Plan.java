package dev.readygate.benchmark;

import java.time.Duration;

/**
 * How much a run measures. {@code quick} is a CI-sized check (a few samples of everything, under five minutes);
 * {@code full} is what the docs report (at least 100 starts per path, 100 failures per kind, long footprint windows).
 * Sample counts are per repeat: a run repeats every in-process stage {@code repeats} times and reports each repeat
 * beside the pooled figures, to show how much they move.
 *
 * @param mode quick or full
 * @param repeats how many times the in-process stages run
 * @param startsPerPath measured engine starts per restart path and repeat
 * @param warmupStarts unmeasured starts per path before the first repeat (JIT, connection pools)
 * @param falseReadyEpisodes episodes per unservable condition and repeat
 * @param detectionSamples failures per kind and repeat timed for readygate
 * @param detectionBaselineSamples of those, how many also wait for the kubelet baseline (10 to 16 s each)
 * @param midRunSamples faults that arise while ready and that {@code /health} does not show, per kind and repeat
 * @param startupRuns JVM starts per start-up variant
 * @param idleWindow how long the footprint stage watches an idle readygate (probe cost, idle CPU)
 * @param loadWindow how long it loads {@code /readyz} and {@code /status}
 * @param busyWindow how long it sends real traffic to the engine
 * @param footprintHeavyInterval {@code readygate.probe.heavy-interval} of the separate readygate process (the default
 *     60 s in full mode)
 */
record Plan(
        String mode,
        int repeats,
        int startsPerPath,
        int warmupStarts,
        int falseReadyEpisodes,
        int detectionSamples,
        int detectionBaselineSamples,
        int midRunSamples,
        int startupRuns,
        Duration idleWindow,
        Duration loadWindow,
        Duration busyWindow,
        Duration footprintHeavyInterval) {

    /** The same plan with another number of mid-run failure samples (unchanged when negative). */
    Plan withMidRunSamples(int samples) {
        return samples < 0
                ? this
                : new Plan(
                        mode,
                        repeats,
                        startsPerPath,
                        warmupStarts,
                        falseReadyEpisodes,
                        detectionSamples,
                        detectionBaselineSamples,
                        samples,
                        startupRuns,
                        idleWindow,
                        loadWindow,
                        busyWindow,
                        footprintHeavyInterval);
    }

    static Plan of(String mode) {
        return switch (mode) {
            case "quick" ->
                new Plan(
                        "quick",
                        1,
                        3,
                        1,
                        1,
                        4,
                        1,
                        2,
                        // six starts: the fewest whose median has a bounded 95 % interval (Interval)
                        6,
                        Duration.ofSeconds(16),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(20),
                        Duration.ofSeconds(15));
            case "full" ->
                new Plan(
                        "full",
                        2,
                        50,
                        3,
                        3,
                        50,
                        4,
                        20,
                        // six starts, as in quick mode: the fewest whose median has a bounded 95 % interval
                        6,
                        Duration.ofMinutes(5),
                        Duration.ofSeconds(60),
                        Duration.ofSeconds(150),
                        Duration.ofSeconds(60));
            default -> throw new IllegalArgumentException("benchmark.mode must be quick or full, was " + mode);
        };
    }
}
