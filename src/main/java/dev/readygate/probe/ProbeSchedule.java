package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineDiscovery;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.SlotsSample;
import dev.readygate.logging.RateLimitedLog;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
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
 * The probe loop, one pipeline: a cheap check ({@link CheapChecks}: {@code /health}, {@code /metrics}, {@code
 * /v1/models}) every {@code not-ready-interval} while the engine is not ready ({@code down-interval} while its port
 * refuses connections) and every {@code ready-interval} once it is, with {@code /health} alone every {@code
 * health-interval} in between. Each cycle then starts what is due and not already running, without waiting for it (a
 * probe in flight never holds up {@code /health}): the heavy probes as soon as the model is listed, again after {@code
 * heavy-retry-interval} while verification fails, and every {@code heavy-interval} on a ready engine (deferred while it
 * is busy or real traffic succeeds, by at most another interval, then run under load); and on an engine that serves,
 * the light checks every {@code generation.interval} (at once again after a failed one; on an engine where readygate
 * cannot see a taken slot, only once the one before has ended, see {@link DueNow#blind}). What is due when is {@link
 * DueNow}'s to decide, a pure rule; this class only sends, applies and learns. Each observation goes to the state
 * machine as it comes, for the engine start it was made for. Cycles never overlap; the schedule is the retry. A pause
 * ends early when the engine log changes readiness (a new engine process, a start that failed), and on an engine that
 * serves when the idle connection held to its port closes (the engine process may have exited; only on an engine where an
 * idle connection costs no thread, see {@link dev.readygate.engine.EngineDialect#connectionsCostNoThread()}).
 */
final class ProbeSchedule {

    private static final Logger logger = LoggerFactory.getLogger(ProbeSchedule.class);

    private final ReadygateProperties.Probe config;
    private final DueNow.Cadence cadence;
    private final EngineClient client;
    private final EngineStateMachine machine;
    private final Verifier verifier;
    private final @Nullable LightChecks lightChecks;
    private final EngineFactsHolder facts;
    private final CheapChecks cheapChecks;
    private final Clock clock;
    private final RateLimitedLog unexpected;
    private final Scheduler scheduler;
    private volatile @Nullable Instant lastFullCheck;
    /** When the last trial of an engine whose heavy probes are suspended ran ({@link DueNow#trialDue}). */
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
        this.config = config;
        this.cadence = DueNow.Cadence.of(config, lightChecks);
        this.client = client;
        this.machine = machine;
        this.verifier = verifier;
        this.lightChecks = lightChecks;
        this.facts = facts;
        this.cheapChecks = new CheapChecks(client, machine, verifier, facts, discovery, clock);
        this.clock = clock;
        this.unexpected = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
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
                        Mono.delay(DueNow.pause(machine.current(), dialect(), cadence), scheduler),
                        wakeUps.asFlux().next(),
                        connectionClosed()))
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

    /**
     * On an engine that serves: the close of the held connection, handed to the probe scheduler. A close is only a
     * reason to check; the client bounds how often an engine that keeps closing it can cause one.
     */
    private Mono<Boolean> connectionClosed() {
        EngineDialect dialect = dialect();
        // A server that gives every open connection a thread of a small pool (llama-server) would lend one of them to
        // readygate's idle connection, taken from real traffic: such an engine is polled only.
        if (!machine.current().acceptsTraffic() || (dialect != null && !dialect.connectionsCostNoThread())) {
            return Mono.never();
        }
        return client.connectionClosed().publishOn(scheduler).thenReturn(true);
    }

    private @Nullable EngineDialect dialect() {
        EngineSurface surface = facts.current().capabilities().surface();
        return surface == null ? null : surface.dialect();
    }

    private Flux<Observation> cycle() {
        Instant now = clock.instant();
        return switch (DueNow.cheapCheck(machine.current(), lastFullCheck, now, cadence)) {
            case HEALTH_ONLY -> cheapChecks.healthOnly().concatWith(Mono.defer(this::launchDue));
            case FULL -> {
                lastFullCheck = now;
                yield cheapChecks.full(Mono.defer(this::launchDue));
            }
        };
    }

    /** Starts what is due and not running ({@link DueNow#decide}); their observations come when they end. */
    private Mono<Observation> launchDue() {
        EngineFacts current = facts.current();
        Instant now = clock.instant();
        DueNow.Start due = due(current, now, false);
        if (due.heavy()) {
            startHeavy(current, now, due == DueNow.Start.TRIAL_THEN_HEAVY);
            // Light checks never run beside them: one is due now only if they ended at once (suspended, or over the
            // token budget).
            current = facts.current();
            now = clock.instant();
            due = due(current, now, true);
        }
        switch (due) {
            case LIGHT, LIGHT_WAITED_FOR -> startLight(current, now, due == DueNow.Start.LIGHT_WAITED_FOR);
            case PUT_OFF_BY_METRICS, JUDGED_BY_METRICS -> putOff(current, now, due == DueNow.Start.JUDGED_BY_METRICS);
            case PUT_OFF_BY_SLOTS, JUDGED_BY_SLOTS -> putOffBySlots(current, now, due == DueNow.Start.JUDGED_BY_SLOTS);
            default -> {}
        }
        return Mono.empty();
    }

    private DueNow.Start due(EngineFacts current, Instant now, boolean heavyStarted) {
        DueNow.Loop loop = new DueNow.Loop(
                heavyInFlight.get(),
                lightInFlight.get(),
                heavyStarted,
                verifier.suspended(current.startId()),
                lastTrial);
        return DueNow.decide(machine.current(), current, now, cadence, loop);
    }

    private void startHeavy(EngineFacts current, Instant now, boolean trialFirst) {
        if (!heavyInFlight.compareAndSet(false, true)) {
            return;
        }
        ModelCard listed = Objects.requireNonNull(current.card());
        String startId = current.startId();
        facts.learn(startId, f -> f.withLastHeavy(now));
        String version = Objects.requireNonNullElse(current.vllmVersion(), "unknown");
        // Busy detection compares with this cycle's scrape, never with a stale one.
        EngineMetricsSample before = current.freshSample();
        (trialFirst ? trial(startId, listed, before, now) : Mono.<Void>empty())
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
        lastTrial = now;
        return Objects.requireNonNull(lightChecks)
                .trial(card, before)
                .doOnNext(passed -> {
                    if (passed) {
                        verifier.resume(startId);
                    }
                })
                .then();
    }

    /** A light check, on an engine that serves; on a {@link DueNow#blind} one, waited for to its end. */
    private void startLight(EngineFacts current, Instant now, boolean waitedFor) {
        LightChecks checks = Objects.requireNonNull(lightChecks);
        ModelCard card = Objects.requireNonNull(current.card());
        if (!lightInFlight.compareAndSet(false, true)) {
            return;
        }
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheck(now));
        String version = Objects.requireNonNullElse(current.vllmVersion(), "unknown");
        Flux<Observation> verdicts = waitedFor
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
     * How long a light check of a {@link DueNow#blind} engine is waited for: {@code heavy-interval}, and then
     * {@code failure-threshold} + 1 more {@code heavy-timeout}s, each of which is a failure ({@link #waitedFor}), so
     * that an engine that never answers is out before readygate gives the check up.
     */
    private Duration blindWait() {
        return config.heavyInterval().plus(config.heavyTimeout().multipliedBy(config.failureThreshold() + 1L));
    }

    /**
     * A light check of a {@link DueNow#blind} engine, sent at {@code sent}: its verdict when it ends, and meanwhile one every
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
     * instead ({@link DueNow#decide} says when): decode steps moving since the one put off before are busy; none is a
     * stall, a failure as a light check's would be.
     */
    private void putOff(EngineFacts current, Instant now, boolean judged) {
        EngineMetricsSample sample = Objects.requireNonNull(current.freshSample());
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheckPutOff(now, sample));
        if (judged) {
            Observation observation = Objects.requireNonNull(lightChecks)
                    .putOff(
                            Objects.requireNonNull(current.putOffSince()),
                            sample,
                            Duration.between(Objects.requireNonNull(current.lastLight()), now),
                            now);
            if (observation != null) {
                machine.apply(observation, startId);
            }
        }
    }

    /**
     * {@link #putOff} on llama-server's {@code /slots} (no usable {@code /metrics}): judged from the tokens the requests
     * in its slots generated.
     */
    private void putOffBySlots(EngineFacts current, Instant now, boolean judged) {
        SlotsSample sample = Objects.requireNonNull(current.slots());
        String startId = current.startId();
        facts.learn(startId, f -> f.withLightCheckPutOff(now, sample));
        if (judged) {
            machine.apply(
                    Objects.requireNonNull(lightChecks)
                            .putOff(
                                    Objects.requireNonNull(current.slotsPutOffSince()),
                                    sample,
                                    Duration.between(Objects.requireNonNull(current.lastLight()), now),
                                    now),
                    startId);
        }
    }
}
