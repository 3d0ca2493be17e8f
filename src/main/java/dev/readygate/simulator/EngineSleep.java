package dev.readygate.simulator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * vLLM's sleep mode in one engine process ({@code --enable-sleep-mode}, {@code readygate.simulator.sleep-mode}): what
 * {@code POST /sleep}, {@code POST /wake_up} and {@code collective_rpc("reload_weights")} change, and what dies with the
 * process. Level 1 offloads the weights to CPU memory and discards the KV cache (the weights come back intact); level 2
 * discards both, so the weights woken before a {@code reload_weights} hold garbage and the engine answers other tokens.
 * While any tag sleeps the scheduler is paused: a completion sent meanwhile is queued and served once every tag is
 * awake. The {@code wake-corrupts} fault makes any wake of the weights come back as garbage, as level 2's without a
 * reload.
 */
final class EngineSleep {

    static final String WEIGHTS = "weights";
    static final String KV_CACHE = "kv_cache";
    static final List<String> TAGS = List.of(WEIGHTS, KV_CACHE);

    private final EngineLines lines;
    private final GpuMemoryModel gpu;
    private final SimulatorProperties properties;
    private final Scheduler timer;
    private final EngineMetrics metrics;
    private final int pid;
    private final int kvTokens;
    /** Whether the {@code wake-corrupts} fault is on: a wake of the weights brings them back corrupted. */
    private final BooleanSupplier wakeCorrupts;
    // The scheduler runs (true) or is paused by a sleep (false): queued completions wait for true.
    private final Sinks.Many<Boolean> scheduling = Sinks.many().replay().latestOrDefault(true);
    // The requests in flight run (true) or are frozen by a sleep with mode=keep (false) until the wake.
    private final Sinks.Many<Boolean> inFlightRuns = Sinks.many().replay().latestOrDefault(true);
    // A sleep with mode=abort (the default) ends every request in flight.
    private final Sinks.Many<Boolean> aborts = Sinks.many().multicast().directBestEffort();

    /**
     * What a sleep does with the requests in flight: vLLM's {@code PauseMode}, {@code POST /sleep?mode=} (vLLM main at
     * e7a47b8, vllm/entrypoints/serve/dev/sleep/api_router.py; {@code AsyncLLM.sleep(level, mode="abort")} at 00080ee,
     * vllm/v1/engine/async_llm.py).
     */
    enum Mode {
        /** Every request in flight ends at once, {@code finish_reason} {@code abort} (the default). */
        ABORT,
        /** New requests wait; the sleep begins once those in flight have finished. */
        WAIT,
        /** The requests in flight are frozen where they are and go on after the wake. */
        KEEP;

        /** The mode {@code /sleep?mode=} names, or null for one vLLM does not know. */
        static @Nullable Mode of(String name) {
            for (Mode mode : values()) {
                if (mode.name().toLowerCase(java.util.Locale.ROOT).equals(name)) {
                    return mode;
                }
            }
            return null;
        }
    }

    private int level;
    private final Set<String> sleepingTags = new LinkedHashSet<>();
    private boolean garbage;

    EngineSleep(
            EngineLines lines,
            GpuMemoryModel gpu,
            SimulatorProperties properties,
            Scheduler timer,
            EngineMetrics metrics,
            int pid,
            int kvTokens,
            BooleanSupplier wakeCorrupts) {
        this.lines = lines;
        this.gpu = gpu;
        this.properties = properties;
        this.timer = timer;
        this.metrics = metrics;
        this.pid = pid;
        this.kvTokens = kvTokens;
        this.wakeCorrupts = wakeCorrupts;
    }

    private int core() {
        return pid + 1;
    }

    private double weightsGib() {
        return properties.model().weightsGib();
    }

    private double kvGib() {
        return kvTokens * 112.0 / 1024 / 1024;
    }

    /**
     * {@code POST /sleep?level=N}: frees the weights (offloaded at level 1, discarded at level 2) and the KV cache,
     * pauses the scheduler; answers once done. A second sleep changes nothing (vLLM warns).
     */
    Mono<Void> sleep(int level) {
        return sleep(level, Mode.ABORT);
    }

    /** As {@link #sleep(int)}, with the requests in flight treated as {@code mode} says first. */
    Mono<Void> sleep(int level, Mode mode) {
        Mono<Void> first = switch (mode) {
            case ABORT -> Mono.fromRunnable(() -> aborts.tryEmitNext(true));
            case WAIT ->
                Mono.<Void>fromRunnable(() -> scheduling.tryEmitNext(false))
                        .then(Flux.interval(Duration.ZERO, Duration.ofMillis(10), timer)
                                .filter(tick -> metrics.running.get() == 0)
                                .next()
                                .then());
            case KEEP -> Mono.fromRunnable(() -> inFlightRuns.tryEmitNext(false));
        };
        double seconds = level == 1 ? 0.05 + weightsGib() * 0.08 : 0.03;
        return first.then(Mono.delay(Duration.ofNanos((long) (seconds * 1e9)), timer))
                .then(Mono.fromRunnable(() -> {
                    synchronized (this) {
                        if (this.level > 0) {
                            lines.alreadySleeping(core());
                            return;
                        }
                        this.level = level;
                        metrics.sleepLevel = level;
                        sleepingTags.clear();
                        sleepingTags.addAll(TAGS);
                        scheduling.tryEmitNext(false);
                        double freed = weightsGib() + kvGib();
                        double backedUp = level == 1 ? weightsGib() : 0;
                        gpu.engineResident(false, false);
                        lines.fellAsleep(core(), freed, backedUp, gpu.usedGib(), seconds);
                    }
                }));
    }

    /**
     * {@code POST /wake_up}, {@code tags} none for every sleeping tag: maps the tags' memory back (level 1's weights from
     * CPU memory, level 2's uninitialized); once no tag sleeps the scheduler resumes and queued completions run.
     */
    Mono<Void> wakeUp(@Nullable List<String> tags) {
        return Mono.fromRunnable(() -> {
            synchronized (this) {
                lines.wakeRequested(pid, tags == null ? "None" : pythonList(tags));
                if (level == 0) {
                    lines.notSleeping(core());
                    return;
                }
                List<String> waking = tags == null ? new ArrayList<>(sleepingTags) : tags;
                for (String tag : waking) {
                    if (!sleepingTags.contains(tag)) {
                        lines.tagNotSleeping(core(), tag, pythonSet(sleepingTags));
                        return;
                    }
                }
                String printed = tags == null ? pythonSet(sleepingTags) : pythonList(tags);
                sleepingTags.removeAll(waking);
                if (waking.contains(WEIGHTS) && (level == 2 || wakeCorrupts.getAsBoolean())) {
                    // Level 2 discarded the weights: the memory comes back holding whatever it holds. Under
                    // wake-corrupts a level 1 wake does too, as the public reports say, and vLLM logs it as any wake.
                    garbage = true;
                }
                gpu.engineResident(!sleepingTags.contains(WEIGHTS), !sleepingTags.contains(KV_CACHE));
                double seconds = waking.contains(WEIGHTS) && level == 1 ? 0.04 + weightsGib() * 0.06 : 0.02;
                lines.wokeUp(core(), seconds, printed);
                if (sleepingTags.isEmpty()) {
                    level = 0;
                    metrics.sleepLevel = 0;
                    scheduling.tryEmitNext(true);
                    inFlightRuns.tryEmitNext(true);
                }
            }
        });
    }

    /** {@code collective_rpc("reload_weights")}: the weights are read from the checkpoint again (a level 2 wake needs it). */
    synchronized void reloadWeights() {
        if (!sleepingTags.contains(WEIGHTS)) {
            garbage = false;
        }
    }

    /** Completes once the scheduler runs (at once while awake): a completion sent while asleep waits here. */
    Mono<Void> awake() {
        return scheduling.asFlux().filter(running -> running).next().then();
    }

    /** Completes once a request in flight may take its next step: at once, but after a sleep with mode=keep. */
    Mono<Void> inFlightMayRun() {
        return inFlightRuns.asFlux().filter(running -> running).next().then();
    }

    /** Signals when a sleep with mode=abort begins: the requests in flight end. */
    Flux<Boolean> aborts() {
        return aborts.asFlux();
    }

    synchronized boolean sleeping() {
        return level > 0;
    }

    /** The level of the last sleep while any tag sleeps, 0 once fully awake. */
    synchronized int level() {
        return level;
    }

    synchronized List<String> sleepingTags() {
        return List.copyOf(sleepingTags);
    }

    /** Whether the weights answer as the checkpoint's: not level 2's garbage. */
    synchronized boolean weightsIntact() {
        return !garbage;
    }

    /** What the weights are now, for {@code /admin/state}. */
    synchronized String weights() {
        if (sleepingTags.contains(WEIGHTS)) {
            return level == 1 ? "offloaded" : "discarded";
        }
        return garbage ? "garbage" : "intact";
    }

    /** The checkpoint the weights answer as: another one (other tokens, as from other values) while they hold garbage. */
    synchronized String answering(String checkpoint) {
        return garbage ? checkpoint + "+discarded" : checkpoint;
    }

    private static String pythonList(List<String> tags) {
        return tags.stream().map(tag -> "'" + tag + "'").toList().toString();
    }

    private static String pythonSet(Set<String> tags) {
        return "{" + String.join(", ", tags.stream().map(tag -> "'" + tag + "'").toList()) + "}";
    }
}
