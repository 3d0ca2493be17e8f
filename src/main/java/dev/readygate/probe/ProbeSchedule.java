package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineDiscovery;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import dev.readygate.logging.RateLimitedLog;
import dev.readygate.readiness.Check;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The probe loop, one pipeline: a cheap check ({@code /health}, {@code /metrics}, {@code /v1/models}) every
 * {@code not-ready-interval} while the engine is not ready ({@code down-interval} while its port refuses connections)
 * and every {@code ready-interval} once it is, with {@code /health} alone every {@code health-interval} in between.
 * Each cycle then starts what is due and not already running, without waiting for it (a probe in flight never holds
 * up {@code /health}): the heavy probes as soon as the model is listed, again after {@code heavy-retry-interval} while
 * verification fails, and every {@code heavy-interval} on a ready engine (deferred while it is busy or real traffic
 * succeeds, by at most another interval, then run under load); and on an engine that serves, the light checks every
 * {@code generation.interval} (at once again after a failed one; on an engine where readygate cannot see a taken slot,
 * only once the one before has ended, see {@link #blind}). Each observation goes to the state machine as it
 * comes, for the engine start it was made for. Cycles never overlap; the schedule is the retry. A pause
 * ends early when the engine log changes readiness (a new engine process, a start that failed), and on an engine that
 * serves when the idle connection held to its port closes (the engine process may have exited; only on an engine where an
 * idle connection costs no thread, see {@link dev.readygate.engine.EngineDialect#connectionsCostNoThread()}).
 */
final class ProbeSchedule {

    private static final Logger logger = LoggerFactory.getLogger(ProbeSchedule.class);

    /** Requests our own verification adds to {@code vllm:request_success_total} (representative and canary); each
     * light check adds one more. */
    private static final int OWN_REQUESTS_PER_VERIFICATION = 2;

    /** Cheap-check cycles between two reads of {@code /version} on the same engine. */
    private static final int VERSION_RECHECK_CYCLES = 30;

    private final ReadygateProperties.Probe config;
    private final EngineClient client;
    private final EngineStateMachine machine;
    private final Verifier verifier;
    private final @Nullable LightChecks lightChecks;
    private final EngineFactsHolder facts;
    private final EngineDiscovery discovery;
    private final Clock clock;
    private final RateLimitedLog unexpected;
    // A part of /metrics that comes and goes (a body just over max-body-size) is said once a minute, with a count.
    private final RateLimitedLog evidenceLost;
    private final Scheduler scheduler;
    private volatile @Nullable Instant lastFullCheck;
    /** When the last trial of an engine whose heavy probes are suspended ran ({@link #trialDue}). */
    private volatile @Nullable Instant lastTrial;

    private final AtomicBoolean heavyInFlight = new AtomicBoolean();
    private final AtomicBoolean lightInFlight = new AtomicBoolean();
    private final Sinks.Many<Boolean> wakeUps = Sinks.many().multicast().directBestEffort();

    public ProbeSchedule(
            ReadygateProperties.Probe config,
            EngineClient client,
            EngineStateMachine machine,
            Verifier verifier,
            @Nullable LightChecks lightChecks,
            EngineFactsHolder facts,
            EngineDiscovery discovery,
            Clock clock,
            Scheduler scheduler) {
        this.discovery = discovery;
        this.config = config;
        this.client = client;
        this.machine = machine;
        this.verifier = verifier;
        this.lightChecks = lightChecks;
        this.facts = facts;
        this.clock = clock;
        this.unexpected = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
        this.evidenceLost = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
        this.scheduler = scheduler;
    }

    /**
     * The endless sequence of observations, each applied to the state machine by the step that made it, before the next
     * step starts (a step reads the state and the facts its predecessors left). Subscribed to by the application's
     * lifecycle; tests drive it in virtual time.
     */
    public Flux<Observation> observations() {
        Flux<Observation> cycle = Flux.defer(this::cycle).onErrorResume(error -> {
            // Every expected failure is an observation; this is a bug, and the loop must outlive it. It may happen on
            // every tick: once a minute, with a count.
            unexpected.warn("probe-cycle", "Probe cycle failed unexpectedly", error);
            return Flux.empty();
        });
        // A pause ends early when the engine log changed readiness meanwhile (a new process's header takes a ready
        // engine down, to be checked at the down interval rather than after the ready one), and, on an engine that
        // serves, when the idle connection readygate holds to its port closes: the engine may have exited, and the
        // check that follows (a refused connect) says so now rather than at the next health-interval.
        Mono<Observation> pause = Mono.defer(() -> Mono.firstWithSignal(
                        Mono.delay(interval(), scheduler), wakeUps.asFlux().next(), connectionClosed()))
                .then(Mono.empty());
        return cycle.concatWith(pause).repeat();
    }

    /**
     * Readiness changed outside the loop (the engine log began or ended a start): the pause in progress ends now, so the
     * next check comes at the interval of the new state.
     */
    @EventListener
    public void onEngineStateChanged(EngineStateChanged change) {
        if (change.cause() instanceof Observation.ProcessStarted || change.cause() instanceof Observation.StartFailed) {
            // Best effort: a wake-up while a cycle runs is not needed (the pause after it reads the new state).
            wakeUps.tryEmitNext(true);
        }
    }

    /** Applies an observation now and hands it on. */
    private Observation applied(Observation observation) {
        machine.apply(observation);
        return observation;
    }

    private Mono<Observation> apply(Observation observation) {
        return Mono.fromSupplier(() -> applied(observation));
    }

    /**
     * On an engine that serves: the close of the held connection, handed to the probe scheduler. A close is only a
     * reason to check; the client bounds how often an engine that keeps closing it can cause one.
     */
    private Mono<Boolean> connectionClosed() {
        EngineSurface surface = facts.current().capabilities().surface();
        // A server that gives every open connection a thread of a small pool (llama-server) would lend one of them to
        // readygate's idle connection, taken from real traffic: such an engine is polled only.
        if (!machine.current().acceptsTraffic()
                || (surface != null && !surface.dialect().connectionsCostNoThread())) {
            return Mono.never();
        }
        return client.connectionClosed().publishOn(scheduler).thenReturn(true);
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
            return healthOnly().concatWith(Mono.defer(this::launchDue));
        }
        lastFullCheck = now;
        return client.health().flatMapMany(call -> switch (call) {
            case EngineCall.Success<Void> ok ->
                Flux.concat(
                        Mono.fromSupplier(() -> applied(new Observation.HealthOk(clock.instant()))),
                        Mono.defer(this::scrape),
                        Mono.defer(this::readSlots),
                        Mono.defer(this::listModel),
                        Mono.defer(this::accepted),
                        Mono.defer(this::discover),
                        Mono.defer(this::readVersion),
                        Mono.defer(this::launchDue));
            case EngineCall.Failure<Void> failure -> apply(healthFailed(failure.failure()));
        });
    }

    /**
     * Between two full cheap checks of a ready engine, {@code /health} alone: its outcome counts exactly as in a full
     * check, so a refused connection or a 503 takes the engine out within {@code health-interval}.
     */
    private Flux<Observation> healthOnly() {
        return client.health()
                .map(call -> applied(
                        switch (call) {
                            case EngineCall.Success<Void> ok -> new Observation.HealthOk(clock.instant());
                            case EngineCall.Failure<Void> failure -> healthFailed(failure.failure());
                        }))
                .flux();
    }

    private Observation healthFailed(EngineFailure failure) {
        Instant now = clock.instant();
        String detail = "/health: " + failure.detail();
        return switch (failure.kind()) {
            // The engine went away: whatever comes back on the port is a new start (maybe another server).
            case REFUSED -> new Observation.Unreachable(now, Reason.ENGINE_DOWN, detail);
            // The port answers, the model is not loaded yet (llama.cpp's 503 "Loading model"): listening, not dead.
            case LOADING -> new Observation.Loading(now, detail);
            case HTTP_STATUS ->
                Objects.equals(failure.httpStatus(), 503)
                        ? new Observation.EngineDead(now, detail)
                        : new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
            case RESET -> new Observation.CheckFailed(now, Reason.CONNECTION_RESET, detail);
            // TLS failed, the host did not resolve, another I/O error: not an answer of /health's.
            case IO_ERROR -> new Observation.CheckFailed(now, Reason.IO_ERROR, detail);
            default -> new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
        };
    }

    /** Scrapes {@code /metrics}; a new {@code process_start_time_seconds} means the engine restarted unseen. */
    private Mono<Observation> scrape() {
        EngineFacts known = facts.current();
        if (!known.capabilities().metrics()) {
            return Mono.empty();
        }
        return client.metrics().flatMap(call -> {
            Instant at = clock.instant();
            if (call instanceof EngineCall.Failure<EngineMetricsSample> failure) {
                if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                    facts.learn(f -> f.withCapabilities(f.capabilities().withoutMetrics()));
                } else {
                    learnEvidence(f -> f.scrapeFailed(failure.failure().detail(), at));
                }
                return Mono.empty();
            }
            EngineMetricsSample sample = ((EngineCall.Success<EngineMetricsSample>) call).value();
            // Compared with the last usable scrape: a restart while nothing usable came is seen once it comes again.
            String restarted = restartSignal(known.lastSample(), sample);
            if (restarted == null) {
                if (known.firstSample() == null) {
                    dateFirstSeenStart(sample);
                }
                learnEvidence(f -> f.scraped(sample, at));
                return Mono.empty();
            }
            Observation restart = applied(new Observation.Restarted(clock.instant(), restarted, sample.processStart()));
            // The sample is the new process's: the start the restart began learns it.
            learnEvidence(f -> f.scraped(sample, at));
            return Mono.just(restart);
        });
    }

    /**
     * The first scrape of the start readygate first saw running dates it for the restart loop by the engine's own
     * {@code process_start_time_seconds}: without it, that start counts from readygate's first look.
     */
    private void dateFirstSeenStart(EngineMetricsSample sample) {
        EngineStart start = machine.start();
        Instant started = sample.processStart();
        if (start != null && start.firstSeen() && started != null) {
            machine.firstSeenStartBegan(start.id(), started);
        }
    }

    /**
     * On llama-server without usable {@code /metrics}: {@code /slots}, the engine's own word on which slots a request
     * holds (see {@link #waitsHoldingAThread}); not asked again on a start whose server does not offer it. Only an answer
     * of this cycle is kept: a stale one says nothing of now.
     */
    private Mono<Observation> readSlots() {
        EngineFacts known = facts.current();
        EngineSurface surface = known.capabilities().surface();
        if (surface == null
                || surface.dialect() != EngineDialect.LLAMA_CPP
                || !known.slotsOffered()
                || known.freshSample() != null) {
            if (known.slots() != null) {
                facts.learn(f -> f.withSlots(null));
            }
            return Mono.empty();
        }
        return client.slots().flatMap(call -> {
            switch (call) {
                case EngineCall.Success<SlotsSample> answer -> facts.learn(f -> f.withSlots(answer.value()));
                case EngineCall.Failure<SlotsSample> failure -> {
                    if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                        facts.learn(EngineFacts::withoutSlots);
                    } else {
                        facts.learn(f -> f.withSlots(null));
                    }
                }
            }
            return Mono.empty();
        });
    }

    /** Learns from a scrape, and says when evidence readygate relies on is lost (at most once a minute per part). */
    private void learnEvidence(java.util.function.UnaryOperator<EngineFacts> scrape) {
        MetricsEvidence before = facts.current().metricsEvidence();
        facts.learn(scrape);
        MetricsEvidence after = facts.current().metricsEvidence();
        after.lost().forEach((part, loss) -> {
            if (!before.lost().containsKey(part)) {
                evidenceLost.warn(
                        part.value(),
                        "Engine evidence lost: {} ({}): readygate now has {}",
                        part.source(),
                        loss.why(),
                        part.cannot());
            }
        });
        before.lost().keySet().stream()
                .filter(part -> !after.lost().containsKey(part))
                .forEach(part -> logger.debug("Engine evidence back: {}", part.source()));
    }

    /**
     * Why the engine must have restarted since the last scrape of this start, or null: a new process start time, else
     * counters that went down (they only ever rise within one process; a server without the process collector still
     * resets them).
     */
    private static @Nullable String restartSignal(@Nullable EngineMetricsSample before, EngineMetricsSample now) {
        if (before == null) {
            return null;
        }
        Double previousStart = before.processStartTimeSeconds();
        Double start = now.processStartTimeSeconds();
        if (previousStart != null && start != null && !previousStart.equals(start)) {
            return "process_start_time_seconds changed from %.3f to %.3f".formatted(previousStart, start);
        }
        if (start == null) {
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

    /**
     * A canary mismatch latched until the engine restarts, whose model the operator accepted ({@code readygate
     * accept-model}): released, so the heavy probes run again and the canary learns the accepted answer.
     */
    private Mono<Observation> accepted() {
        EngineState state = machine.current();
        boolean latchedMismatch = state.reason() == Reason.CANARY_MISMATCH
                && ((state instanceof EngineState.NotReady n && n.latched())
                        || (state instanceof EngineState.VerificationFailed f && f.latched()));
        if (!latchedMismatch) {
            return Mono.empty();
        }
        return verifier.acceptancePending().filter(Boolean::booleanValue).map(pending -> {
            logger.warn("The operator accepted the model served now: the canary mismatch is released and the"
                    + " canary's next answer given alone becomes its baseline");
            // Weights changed on purpose: this start is no restart loop's either.
            EngineStart start = machine.start();
            if (start != null) {
                machine.modelSwapped(start.id(), "serves a model the operator accepted");
            }
            return applied(new Observation.ModelAccepted(
                    clock.instant(),
                    "the operator accepted the model (readygate accept-model): verifying again, the canary's"
                            + " answer becomes its baseline"));
        });
    }

    /**
     * Lists {@code /v1/models} until the model is known, and again at every full cheap check of an engine that serves
     * ({@code ready-interval}): a served model that is no longer listed, or another one in its place, is a failing
     * {@link Check#MODEL} check, cleared when it is listed again.
     */
    private Mono<Observation> listModel() {
        EngineState state = machine.current();
        ModelCard known = facts.current().card();
        boolean serving = state.acceptsTraffic();
        if (known != null && !(state instanceof EngineState.Healthy) && !serving) {
            return Mono.empty();
        }
        return client.model().mapNotNull(call -> switch (call) {
            // An engine that serves may answer late when it is busy: no answer says nothing of its model (a hang is
            // /health's and the light checks' to see).
            case EngineCall.Failure<ModelCard> failure
            when serving && failure.failure().kind() == EngineFailure.Kind.TIMED_OUT -> null;
            case EngineCall.Success<ModelCard> listed
            when serving && known != null && !known.id().equals(listed.value().id()) ->
                applied(new Observation.CheckFailed(
                        clock.instant(),
                        Check.MODEL,
                        Reason.MODEL_NOT_LISTED,
                        "/v1/models lists " + listed.value().id() + ", not the served " + known.id()));
            case EngineCall.Success<ModelCard> listed -> {
                if (!serving) {
                    // What discovery learned of this start (its context length) completes the card.
                    facts.learn(f -> {
                        EngineSurface surface = f.capabilities().surface();
                        return f.withCard(surface == null ? listed.value() : surface.applyTo(listed.value()));
                    });
                    // Another model than the start before served: a deliberate swap, never a restart loop's start.
                    EngineStart start = machine.start();
                    if (start != null && facts.modelSwapped(start.id(), listed.value())) {
                        machine.modelSwapped(start.id(), "serves another model than the start before it");
                    }
                }
                yield applied(new Observation.ModelListed(
                        clock.instant(), listed.value().id()));
            }
            case EngineCall.Failure<ModelCard> failure ->
                applied(new Observation.CheckFailed(
                        clock.instant(),
                        Check.MODEL,
                        Reason.MODEL_NOT_LISTED,
                        "/v1/models: " + failure.failure().detail()));
        });
    }

    /**
     * Once per engine start, after the model is listed and before any heavy probe: finds out what the engine offers
     * (dialect, endpoints, context length, version). Its context length completes the model card, its version is the
     * start's version (a server without {@code /version} keeps the one its server information gave).
     */
    private Mono<Observation> discover() {
        EngineFacts current = facts.current();
        ModelCard card = current.card();
        if (card == null || current.capabilities().surface() != null) {
            return Mono.empty();
        }
        String startId = current.startId();
        return discovery.discover(card).flatMap(surface -> {
            facts.learn(
                    startId,
                    f -> f.withCapabilities(f.capabilities().withSurface(surface))
                            .withCard(surface.applyTo(Objects.requireNonNullElse(f.card(), card)))
                            .withVllmVersion(surface.version() != null ? surface.version() : "unknown"));
            logger.info(
                    "Engine at {} speaks {} ({}); max_model_len {} ({}); {}",
                    card.id(),
                    surface.dialect().value(),
                    surface.dialectEvidence(),
                    surface.maxModelLen(),
                    surface.maxModelLenSource(),
                    surface.describeEndpoints());
            return Mono.<Observation>empty();
        });
    }

    /**
     * Reads {@code /version} once per engine start, and again every {@value #VERSION_RECHECK_CYCLES} cycles: a
     * different version means another engine, even if readygate saw neither the port close nor the process start
     * time change.
     */
    private Mono<Observation> readVersion() {
        EngineFacts current = facts.current();
        String known = current.vllmVersion();
        boolean versionAnswers = current.capabilities().version();
        if (known != null && (!versionAnswers || current.cyclesSinceVersion() + 1 < VERSION_RECHECK_CYCLES)) {
            facts.learn(EngineFacts::withVersionCycle);
            return Mono.empty();
        }
        facts.learn(EngineFacts::withVersionRead);
        if (!versionAnswers) {
            facts.learn(f -> f.withVllmVersion("unknown"));
            return Mono.empty();
        }
        return client.version().flatMap(call -> {
            switch (call) {
                case EngineCall.Success<String> version -> {
                    if (known != null && !known.equals(version.value())) {
                        Observation restart = applied(new Observation.Restarted(
                                clock.instant(), "vLLM version changed from " + known + " to " + version.value()));
                        // The version is the new engine's: the start the restart began learns it.
                        facts.learn(f -> f.withVllmVersion(version.value()));
                        return Mono.just(restart);
                    }
                    facts.learn(f -> f.withVllmVersion(version.value()));
                }
                case EngineCall.Failure<String> failure -> {
                    if (failure.failure().kind() == EngineFailure.Kind.NOT_SUPPORTED) {
                        facts.learn(f -> f.withCapabilities(f.capabilities().withoutVersion())
                                .withVllmVersion("unknown"));
                    }
                }
            }
            return Mono.empty();
        });
    }

    /** Starts the probes that are due and not running; their observations come when they end. */
    private Mono<Observation> launchDue() {
        launchHeavyIfDue();
        launchLightIfDue();
        return Mono.empty();
    }

    private void launchHeavyIfDue() {
        EngineFacts current = facts.current();
        ModelCard listed = current.card();
        Instant now = clock.instant();
        // Never beside a light check: readygate's own requests in one batch would move the canary's logprob (vLLM is
        // not batch-invariant), and a canary cannot see readygate's other probe in the engine's metrics in time.
        if (listed == null
                || heavyInFlight.get()
                || lightInFlight.get()
                || !heavyDue(machine.current(), current, now)
                || !heavyInFlight.compareAndSet(false, true)) {
            return;
        }
        String startId = current.startId();
        facts.learn(startId, f -> f.withLastHeavy(now));
        String version = Objects.requireNonNullElse(current.vllmVersion(), "unknown");
        // Busy detection compares with this cycle's scrape, never with a stale one.
        EngineMetricsSample before = current.freshSample();
        trial(startId, listed, before, now)
                .then(Mono.defer(() -> verifier.verify(startId, listed, version, before)))
                .doOnNext(observation -> {
                    machine.apply(observation, startId);
                    facts.learn(startId, f -> f.withSuccessesAtLastHeavy(f.successes()));
                })
                .doFinally(signal -> heavyInFlight.set(false))
                .subscribe(
                        observation -> {},
                        error -> unexpected.warn("heavy-probes", "Heavy probes failed unexpectedly", error));
    }

    /**
     * While the heavy probes of this start are suspended (the breaker is open) and the engine is out because its light
     * checks failed, a generation check every {@code generation.interval} before the verification that is due: once
     * one passes, the fault the light checks saw has cleared, and this verification is the breaker's half-open trial at
     * once rather than after the rest of {@code suspension}. A fault only the heavy probes see (a light check passes
     * through it) waits out the suspension as before; so does every verification without light checks, or after a
     * trial that failed.
     */
    private Mono<Void> trial(String startId, ModelCard card, @Nullable EngineMetricsSample before, Instant now) {
        LightChecks checks = lightChecks;
        if (checks == null
                || !outByLightChecks(machine.current())
                || !trialDue(
                        verifier.suspended(startId),
                        lastTrial,
                        now,
                        config.generation().interval())) {
            return Mono.empty();
        }
        lastTrial = now;
        return checks.trial(card, before)
                .doOnNext(passed -> {
                    if (passed) {
                        verifier.resume(startId);
                    }
                })
                .then();
    }

    /** Whether the engine is out for what a light check sees (it failed, timed out or stalled), not latched. */
    static boolean outByLightChecks(EngineState state) {
        return state instanceof EngineState.NotReady n
                && !n.latched()
                && (n.cause() == Reason.GENERATION_FAILED
                        || n.cause() == Reason.GENERATION_TIMED_OUT
                        || n.cause() == Reason.GENERATION_STALLED);
    }

    /** Whether a suspended engine's trial is due: suspended, and none ran within {@code interval}. */
    static boolean trialDue(boolean suspended, @Nullable Instant last, Instant now, Duration interval) {
        return suspended && (last == null || !now.isBefore(last.plus(interval)));
    }

    /**
     * On an engine that serves, idle or busy: a light check every {@code generation.interval}, and at the next cycle
     * after one failed (to confirm or clear it fast).
     */
    private void launchLightIfDue() {
        LightChecks checks = lightChecks;
        EngineState state = machine.current();
        EngineFacts current = facts.current();
        ModelCard card = current.card();
        // Not while the heavy probes run (see launchHeavyIfDue): the next cycle runs it.
        if (checks == null || card == null || !state.acceptsTraffic() || lightInFlight.get() || heavyInFlight.get()) {
            return;
        }
        Instant now = clock.instant();
        Instant last = current.lastLight();
        boolean confirming =
                state instanceof EngineState.Degraded d && d.failing().containsKey(Check.GENERATION);
        if (!confirming
                && last != null
                && now.isBefore(last.plus(config.generation().interval()))) {
            return;
        }
        if (waitsHoldingAThread(current)) {
            putOff(checks, current, now);
            return;
        }
        if (!lightInFlight.compareAndSet(false, true)) {
            return;
        }
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheck(now));
        String version = Objects.requireNonNullElse(current.vllmVersion(), "unknown");
        Flux<Observation> verdicts = blind(current)
                ? waitedFor(checks, checks.run(current.lightChecks(), card, version, null, blindWait()), now)
                : checks.run(current.lightChecks(), card, version, current.freshSample())
                        .flux();
        verdicts.doOnNext(observation -> machine.apply(observation, startId))
                .doFinally(signal -> lightInFlight.set(false))
                .subscribe(
                        observation -> {},
                        error -> unexpected.warn("light-check", "Light check failed unexpectedly", error));
    }

    /**
     * Whether readygate cannot see a taken slot of this engine: one that gives each connection a thread (llama-server),
     * with no usable {@code /metrics} and no {@code /slots} this cycle. A light check sent there may wait in the server's
     * queue for a slot a client holds, and giving it up would not free the thread it holds there (the server keeps it
     * until the slot frees): it is waited for to its end, and no other is sent beside it ({@link #waitedFor}).
     */
    static boolean blind(EngineFacts current) {
        EngineSurface surface = current.capabilities().surface();
        return surface != null
                && !surface.dialect().connectionsCostNoThread()
                && current.freshSample() == null
                && current.slots() == null;
    }

    /**
     * How long a light check of a {@link #blind} engine is waited for: {@code heavy-interval}, and then
     * {@code failure-threshold} + 1 more {@code heavy-timeout}s, each of which is a failure ({@link #waitedFor}), so
     * that an engine that never answers is out before readygate gives the check up.
     */
    private Duration blindWait() {
        return config.heavyInterval().plus(config.heavyTimeout().multipliedBy(config.failureThreshold() + 1L));
    }

    /**
     * A light check of a {@link #blind} engine, sent at {@code sent}: its verdict when it ends, and meanwhile one every
     * {@code heavy-timeout} it waits ({@link LightChecks#waiting}: busy up to {@code heavy-interval}, a failure after).
     */
    private Flux<Observation> waitedFor(LightChecks checks, Mono<Observation> check, Instant sent) {
        Duration every = checks.budget(null);
        Mono<Observation> answer = check.cache();
        Flux<Observation> waiting = Flux.interval(every, every, scheduler)
                .map(tick -> checks.waiting(
                        Duration.between(sent, clock.instant()), config.heavyInterval(), clock.instant()))
                .takeUntilOther(answer);
        return Flux.merge(waiting, answer);
    }

    /**
     * A light check due while every llama-server slot stays taken is put off, and judged from the engine's metrics
     * instead, over at least {@code generation.interval} and the budget the check would have had: decode steps moving
     * since the one put off before are busy; none is a stall, a failure as a light check's would be.
     */
    private void putOff(LightChecks checks, EngineFacts current, Instant now) {
        EngineMetricsSample sample = current.freshSample();
        if (sample == null) {
            putOffBySlots(checks, current, now);
            return;
        }
        EngineMetricsSample since = current.putOffSince();
        Instant last = current.lastLight();
        if (since != null && last != null && !judgedAgain(checks.budget(since), last, now)) {
            return;
        }
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheckPutOff(now, sample));
        if (since != null && last != null) {
            Observation observation = checks.putOff(since, sample, Duration.between(last, now), now);
            if (observation != null) {
                machine.apply(observation, startId);
            }
        }
    }

    /**
     * Whether a light check put off at {@code last} is judged again at {@code now}: once the longer of
     * {@code generation.interval} and the {@code budget} the check would have had has passed.
     */
    private boolean judgedAgain(Duration budget, Instant last, Instant now) {
        Duration window = budget.compareTo(config.generation().interval()) > 0
                ? budget
                : config.generation().interval();
        return !now.isBefore(last.plus(window));
    }

    /**
     * {@link #putOff} on llama-server's {@code /slots} (no usable {@code /metrics}): judged from the tokens the requests
     * in its slots generated, over at least {@code generation.interval} and the budget the check would have had.
     */
    private void putOffBySlots(LightChecks checks, EngineFacts current, Instant now) {
        SlotsSample sample = Objects.requireNonNull(current.slots());
        SlotsSample since = current.slotsPutOffSince();
        Instant last = current.lastLight();
        if (since != null && last != null && !judgedAgain(checks.budget(null), last, now)) {
            return;
        }
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheckPutOff(now, sample));
        if (since != null && last != null) {
            machine.apply(checks.putOff(since, sample, Duration.between(last, now), now), startId);
        }
    }

    /**
     * Whether a light check would only wait for a slot while holding one of the server's few HTTP threads: on an
     * engine that gives each connection a thread (llama-server) whose latest scrape shows every slot taken
     * ({@code llamacpp:requests_processing} at its {@code total_slots}) or a request waiting. Its answer would be busy
     * at best; the thread it holds (until the slot frees, even after readygate gave up on it) is one that
     * {@code /health}, the kubelet or a client needs. It is put off to the first cycle whose scrape shows a free slot.
     * Without usable {@code /metrics}, llama-server's {@code /slots} tells the same (every slot {@code is_processing}).
     */
    private static boolean waitsHoldingAThread(EngineFacts current) {
        EngineSurface surface = current.capabilities().surface();
        EngineMetricsSample sample = current.freshSample();
        if (surface == null || surface.dialect().connectionsCostNoThread()) {
            return false;
        }
        if (sample == null) {
            // No /metrics: llama-server's /slots, where it answers.
            return current.slots() != null && current.slots().full();
        }
        boolean waiting = sample.requestsWaiting() != null && sample.requestsWaiting() > 0;
        boolean full = surface.slots() != null
                && sample.requestsRunning() != null
                && sample.requestsRunning() >= surface.slots();
        return waiting || full;
    }

    private boolean heavyDue(EngineState state, EngineFacts current, Instant now) {
        return switch (state) {
            case EngineState.ModelListed m -> true;
            case EngineState.Verifying v -> true;
            case EngineState.VerificationFailed f -> !f.latched() && elapsed(current, now, config.heavyRetryInterval());
            case EngineState.NotReady n -> !n.latched() && elapsed(current, now, config.heavyRetryInterval());
            // Degraded by a verification: retried to confirm or clear (the other checks clear themselves).
            case EngineState.Degraded d ->
                d.failing().containsKey(Check.VERIFICATION) && elapsed(current, now, config.heavyRetryInterval());
            case EngineState.Ready r -> readyHeavyDue(current, now);
            // Held in a restart loop: verified again once the start has stayed up long enough.
            case EngineState.Held h -> !now.isBefore(h.until()) && elapsed(current, now, config.heavyRetryInterval());
            default -> false;
        };
    }

    private static boolean elapsed(EngineFacts current, Instant now, Duration interval) {
        Instant last = current.lastHeavy();
        return last == null || !now.isBefore(last.plus(interval));
    }

    /**
     * A ready engine's heavy probes: every {@code heavy-interval} while it is idle; while it is busy or real traffic
     * succeeds they are deferred, by at most another interval (the light checks verify it meanwhile), then they run
     * under load, where a timeout with progress is busy and latency objectives do not apply. Evidence from traffic
     * defers verification, never replaces it.
     */
    private boolean readyHeavyDue(EngineFacts current, Instant now) {
        if (!elapsed(current, now, config.heavyInterval())) {
            return false;
        }
        return (idle(current) && !trafficProvesHealth(current))
                || elapsed(current, now, config.heavyInterval().multipliedBy(2));
    }

    /**
     * No request running or waiting (or no way to know: a stale sample says nothing of now). Without usable
     * {@code /metrics}, llama-server's {@code /slots} of this cycle: a slot held is work.
     */
    private static boolean idle(EngineFacts current) {
        EngineMetricsSample sample = current.freshSample();
        if (sample == null || !current.capabilities().metrics()) {
            SlotsSample slots = current.slots();
            return slots == null || slots.processing() == 0;
        }
        return zero(sample.requestsRunning()) && zero(sample.requestsWaiting());
    }

    /** Real requests finished successfully since the last heavy probe (beyond readygate's own light checks). */
    private boolean trafficProvesHealth(EngineFacts current) {
        Double before = current.successesAtLastHeavy();
        Double now = current.successes();
        int ownLight = current.lightChecks() - current.lightChecksAtLastHeavy();
        return before != null
                && now != null
                && now - before > OWN_REQUESTS_PER_VERIFICATION + ownLight
                && machine.current() instanceof EngineState.Ready;
    }

    private static boolean zero(@Nullable Double value) {
        return value == null || value == 0;
    }
}
