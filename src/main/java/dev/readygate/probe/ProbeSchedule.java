package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.logging.RateLimitedLog;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The probe loop, one pipeline: a cheap check ({@code /health}, {@code /metrics}, {@code /v1/models}) every
 * {@code not-ready-interval} while the engine is not ready ({@code down-interval} while its port refuses connections)
 * and every {@code ready-interval} once it is, with {@code /health} alone every {@code health-interval} in between; the
 * heavy probes as soon as the model is listed, again after {@code heavy-retry-interval} while verification fails, and
 * every {@code heavy-interval} on a ready engine, only when it is idle and real traffic is not already proving it
 * healthy. Each observation goes to the state machine at once. Cycles never overlap; the schedule is the retry.
 */
public final class ProbeSchedule {

    private static final Logger logger = LoggerFactory.getLogger(ProbeSchedule.class);

    /** Requests our own verification adds to {@code vllm:request_success_total} (representative and canary). */
    private static final int OWN_REQUESTS_PER_VERIFICATION = 2;

    /** Cheap-check cycles between two reads of {@code /version} on the same engine. */
    private static final int VERSION_RECHECK_CYCLES = 30;

    private final ReadygateProperties.Probe config;
    private final EngineClient client;
    private final EngineStateMachine machine;
    private final Verifier verifier;
    private final EngineCapabilities capabilities;
    private final @Nullable RepresentativeProbe representative;
    private final Clock clock;
    private final RateLimitedLog unexpected;
    private final Scheduler scheduler;
    private final EngineFacts facts;
    private volatile @Nullable Double processStart;
    private volatile @Nullable Instant lastHeavy;
    private volatile @Nullable Instant lastFullCheck;
    private volatile @Nullable Double successesAtLastHeavy;
    private int cyclesSinceVersion;
    private volatile @Nullable Disposable running;

    public ProbeSchedule(
            ReadygateProperties.Probe config,
            EngineClient client,
            EngineStateMachine machine,
            Verifier verifier,
            EngineCapabilities capabilities,
            @Nullable RepresentativeProbe representative,
            EngineFacts facts,
            Clock clock,
            Scheduler scheduler) {
        this.config = config;
        this.client = client;
        this.machine = machine;
        this.verifier = verifier;
        this.capabilities = capabilities;
        this.representative = representative;
        this.facts = facts;
        this.clock = clock;
        this.unexpected = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
        this.scheduler = scheduler;
    }

    /** Starts the loop (idempotent). */
    public synchronized void start() {
        if (running == null) {
            running = observations().subscribe();
        }
    }

    /** Stops the loop; a cycle in flight is cancelled. */
    public synchronized void stop() {
        Disposable loop = running;
        running = null;
        if (loop != null) {
            loop.dispose();
        }
    }

    /** The endless sequence of observations, each already applied to the state machine; for tests with virtual time. */
    public Flux<Observation> observations() {
        Flux<Observation> cycle = Flux.defer(this::cycle)
                .doOnNext(machine::apply)
                .onErrorResume(error -> {
                    // Every expected failure is an observation; this is a bug, and the loop must outlive it. It may
                    // happen on every tick: once a minute, with a count.
                    unexpected.warn("probe-cycle", "Probe cycle failed unexpectedly", error);
                    return Flux.empty();
                });
        Mono<Observation> pause =
                Mono.defer(() -> Mono.delay(interval(), scheduler)).then(Mono.empty());
        return cycle.concatWith(pause).repeat();
    }

    private Duration interval() {
        EngineState state = machine.current();
        if (state.acceptsTraffic()) {
            return config.healthInterval();
        }
        // Nothing listens: a check is a refused connect, free for the engine, and it decides how soon a start is seen.
        return state instanceof EngineState.Down down && down.cause() == Reason.ENGINE_DOWN
                ? config.downInterval()
                : config.notReadyInterval();
    }

    private Flux<Observation> cycle() {
        Instant now = clock.instant();
        Instant lastFull = lastFullCheck;
        if (machine.current().acceptsTraffic()
                && lastFull != null
                && now.isBefore(lastFull.plus(config.readyInterval()))) {
            return healthOnly();
        }
        lastFullCheck = now;
        return client.health().flatMapMany(call -> switch (call) {
            case EngineCall.Success<Void> ok ->
                Flux.concat(
                        Mono.fromSupplier(() -> new Observation.HealthOk(clock.instant())),
                        Mono.defer(this::scrape),
                        Mono.defer(this::listModel),
                        Mono.defer(this::readVersion),
                        Mono.defer(this::heavyIfDue));
            case EngineCall.Failure<Void> failure -> Flux.just(healthFailed(failure.failure()));
        });
    }

    /**
     * Between two full cheap checks of a ready engine, {@code /health} alone: its outcome counts exactly as in a full
     * check, so a refused connection or a 503 takes the engine out within {@code health-interval}.
     */
    private Flux<Observation> healthOnly() {
        return client.health()
                .map(call -> switch (call) {
                    case EngineCall.Success<Void> ok -> (Observation) new Observation.HealthOk(clock.instant());
                    case EngineCall.Failure<Void> failure -> healthFailed(failure.failure());
                })
                .flux();
    }

    private Observation healthFailed(EngineFailure failure) {
        Instant now = clock.instant();
        String detail = "/health: " + failure.detail();
        return switch (failure.kind()) {
            case REFUSED -> {
                forgetEngine();
                yield new Observation.Unreachable(now, Reason.ENGINE_DOWN, detail);
            }
            case HTTP_STATUS ->
                Objects.equals(failure.httpStatus(), 503)
                        ? new Observation.EngineDead(now, detail)
                        : new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
            case RESET -> new Observation.CheckFailed(now, Reason.CONNECTION_RESET, detail);
            default -> new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
        };
    }

    /** The engine went away: whatever comes back on the port is a new engine (maybe another server). */
    private void forgetEngine() {
        facts.forget();
        processStart = null;
        lastHeavy = null;
        successesAtLastHeavy = null;
        capabilities.reset();
        if (representative != null) {
            representative.reset();
        }
        // Heavy probes were suspended to spare the engine that failed them; a new engine is verified at once.
        verifier.forgetFailures();
    }

    /** Scrapes {@code /metrics}; a new {@code process_start_time_seconds} means the engine restarted unseen. */
    private Mono<Observation> scrape() {
        if (!capabilities.metrics()) {
            return Mono.empty();
        }
        return client.metrics().flatMap(call -> {
            if (call instanceof EngineCall.Failure<EngineMetricsSample> failure) {
                if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                    capabilities.lackMetrics();
                }
                return Mono.empty();
            }
            EngineMetricsSample sample = ((EngineCall.Success<EngineMetricsSample>) call).value();
            Double previous = processStart;
            Double current = sample.processStartTimeSeconds();
            processStart = current;
            String restarted = restartSignal(previous, current, facts.lastSample(), sample);
            if (restarted != null) {
                String detail = restarted;
                forgetEngine();
                processStart = current;
                facts.scraped(sample, clock.instant());
                return Mono.just(new Observation.Restarted(clock.instant(), detail));
            }
            facts.scraped(sample, clock.instant());
            return Mono.empty();
        });
    }

    /**
     * Why the engine must have restarted since the last scrape, or null: a new process start time, else counters
     * that went down (they only ever rise within one process; a server without the process collector still resets
     * them).
     */
    private static @Nullable String restartSignal(
            @Nullable Double previousStart,
            @Nullable Double start,
            @Nullable EngineMetricsSample before,
            EngineMetricsSample now) {
        if (previousStart != null && start != null && !previousStart.equals(start)) {
            return "process_start_time_seconds changed from %.3f to %.3f".formatted(previousStart, start);
        }
        if (start == null && before != null) {
            if (decreased(before.generationTokens(), now.generationTokens())) {
                return "vllm:generation_tokens_total went down: counters reset";
            }
            if (decreased(before.requestSuccess(), now.requestSuccess())) {
                return "vllm:request_success_total went down: counters reset";
            }
        }
        return null;
    }

    private static boolean decreased(@Nullable Double before, @Nullable Double now) {
        return before != null && now != null && now < before;
    }

    private Mono<Observation> listModel() {
        if (facts.card() != null && !(machine.current() instanceof EngineState.Healthy)) {
            return Mono.empty();
        }
        return client.model().map(call -> switch (call) {
            case EngineCall.Success<ModelCard> listed -> {
                facts.card(listed.value());
                yield new Observation.ModelListed(
                        clock.instant(), listed.value().id());
            }
            case EngineCall.Failure<ModelCard> failure ->
                new Observation.CheckFailed(
                        clock.instant(),
                        Reason.MODEL_NOT_LISTED,
                        "/v1/models: " + failure.failure().detail());
        });
    }

    /**
     * Reads {@code /version} once per engine start, and again every {@value #VERSION_RECHECK_CYCLES} cycles: a
     * different version means another engine, even if readygate saw neither the port close nor the process start
     * time change.
     */
    private Mono<Observation> readVersion() {
        String known = facts.vllmVersion();
        if (known != null && (!capabilities.version() || ++cyclesSinceVersion < VERSION_RECHECK_CYCLES)) {
            return Mono.empty();
        }
        cyclesSinceVersion = 0;
        if (!capabilities.version()) {
            facts.vllmVersion("unknown");
            return Mono.empty();
        }
        return client.version().flatMap(call -> {
            switch (call) {
                case EngineCall.Success<String> version -> {
                    if (known != null && !known.equals(version.value())) {
                        String detail = "vLLM version changed from " + known + " to " + version.value();
                        forgetEngine();
                        facts.vllmVersion(version.value());
                        return Mono.just(new Observation.Restarted(clock.instant(), detail));
                    }
                    facts.vllmVersion(version.value());
                }
                case EngineCall.Failure<String> failure -> {
                    if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                        capabilities.lackVersion();
                        facts.vllmVersion("unknown");
                    }
                }
            }
            return Mono.empty();
        });
    }

    private Mono<Observation> heavyIfDue() {
        ModelCard listed = facts.card();
        Instant now = clock.instant();
        if (listed == null || !heavyDue(machine.current(), now)) {
            return Mono.empty();
        }
        if (trafficProvesHealth()) {
            lastHeavy = now;
            successesAtLastHeavy = successes();
            return Mono.empty();
        }
        lastHeavy = now;
        EngineMetricsSample before = facts.lastSample();
        return verifier.verify(listed, Objects.requireNonNullElse(facts.vllmVersion(), "unknown"), before)
                .doOnNext(observation -> successesAtLastHeavy = successes());
    }

    private boolean heavyDue(EngineState state, Instant now) {
        return switch (state) {
            case EngineState.ModelListed m -> true;
            case EngineState.Verifying v -> true;
            case EngineState.VerificationFailed f -> !f.latched() && elapsed(now, config.heavyRetryInterval());
            case EngineState.NotReady n -> !n.latched() && elapsed(now, config.heavyRetryInterval());
            case EngineState.Degraded d ->
                d.cause() != Reason.HEALTH_FAILED
                        && d.cause() != Reason.MODEL_NOT_LISTED
                        && elapsed(now, config.heavyRetryInterval());
            case EngineState.Ready r -> elapsed(now, config.heavyInterval()) && idle();
            default -> false;
        };
    }

    private boolean elapsed(Instant now, Duration interval) {
        Instant last = lastHeavy;
        return last == null || !now.isBefore(last.plus(interval));
    }

    /** No request running or waiting (or no way to know). */
    private boolean idle() {
        EngineMetricsSample sample = facts.lastSample();
        if (sample == null || !capabilities.metrics()) {
            return true;
        }
        return zero(sample.requestsRunning()) && zero(sample.requestsWaiting());
    }

    /** Real requests finished successfully since the last heavy probe: no need to spend tokens proving it. */
    private boolean trafficProvesHealth() {
        Double before = successesAtLastHeavy;
        Double now = successes();
        return before != null
                && now != null
                && now - before > OWN_REQUESTS_PER_VERIFICATION
                && machine.current() instanceof EngineState.Ready;
    }

    private @Nullable Double successes() {
        EngineMetricsSample sample = facts.lastSample();
        return sample == null ? null : sample.requestSuccess();
    }

    private static boolean zero(@Nullable Double value) {
        return value == null || value == 0;
    }

    /** When the heavy probes last ran (or were skipped because real traffic proved health). */
    public @Nullable Instant lastHeavy() {
        return lastHeavy;
    }
}
