package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.TokenBudget;
import dev.readygate.engine.CompletionRequest;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineDialect;
import dev.readygate.engine.EngineDiscovery;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.ServerInfo;
import dev.readygate.engine.SlotsSample;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.RestartLoop;
import dev.readygate.statedir.StateDir;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.json.JsonMapper;

/** The probe loop in virtual time against a scripted engine: cadence, thresholds, busy, restarts, suspension. */
class ProbeScheduleTests {

    @TempDir
    Path stateDir;

    final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(time.now(TimeUnit.MILLISECONDS));
        }
    };
    final ScriptedEngine engine = new ScriptedEngine();
    final List<EngineState> states = new ArrayList<>();
    EngineStateMachine machine;
    CircuitBreaker breaker;
    RateLimiter limiter;
    ProbeHistory history = new ProbeHistory();
    EngineFactsHolder facts;
    Disposable loop;
    ProbeSchedule schedule;

    /** No light checks: the tests of the cheap checks and the heavy probes alone. */
    static final ReadygateProperties.Generation NO_LIGHT_CHECKS =
            new ReadygateProperties.Generation(false, Duration.ofSeconds(2), Duration.ofMillis(750), 2, 2);

    /** The light checks' defaults, but no canary in their place. */
    static final ReadygateProperties.Generation GENERATION_CHECKS_ONLY =
            new ReadygateProperties.Generation(true, Duration.ofSeconds(2), Duration.ofMillis(750), 2, 0);

    /** The light checks' defaults. */
    static final ReadygateProperties.Generation LIGHT_CHECKS =
            new ReadygateProperties.Generation(true, Duration.ofSeconds(2), Duration.ofMillis(750), 2, 2);

    /**
     * The defaults, except that the faster down and health cadences are off (as before they existed), heavy probes run
     * every minute, and no light checks.
     */
    static ReadygateProperties.Probe probe(int successThreshold, int tokensPerMinute) {
        return probe(successThreshold, tokensPerMinute, Duration.ofMillis(100), Duration.ofSeconds(1));
    }

    static ReadygateProperties.Probe probe(
            int successThreshold, int tokensPerMinute, Duration downInterval, Duration healthInterval) {
        return probe(successThreshold, tokensPerMinute, downInterval, healthInterval, NO_LIGHT_CHECKS);
    }

    static ReadygateProperties.Probe probe(
            int successThreshold,
            int tokensPerMinute,
            Duration downInterval,
            Duration healthInterval,
            ReadygateProperties.Generation generation) {
        return probe(
                successThreshold, tokensPerMinute, downInterval, healthInterval, Duration.ofSeconds(1), generation);
    }

    static ReadygateProperties.Probe probe(
            int successThreshold,
            int tokensPerMinute,
            Duration downInterval,
            Duration healthInterval,
            Duration readyInterval,
            ReadygateProperties.Generation generation) {
        return new ReadygateProperties.Probe(
                Duration.ofMillis(100),
                downInterval,
                readyInterval,
                healthInterval,
                readyInterval.compareTo(Duration.ofSeconds(60)) > 0 ? readyInterval : Duration.ofSeconds(60),
                Duration.ofSeconds(1),
                Duration.ofSeconds(30),
                successThreshold,
                3,
                tokensPerMinute,
                3,
                Duration.ofSeconds(30),
                new ReadygateProperties.Representative(true, new TokenBudget(256, null), 16, 0, null, null),
                new ReadygateProperties.Canary(
                        true, "The capital of France is", 1, 0, List.of(), null, null, 0.01, 0.1, true, true),
                generation);
    }

    /** A canary on a trusted start, with no snapshot, learning its baseline under {@code stateDir}. */
    static CanaryProbe canary(
            ReadygateProperties.Canary config,
            ScriptedEngine engine,
            EngineFactsHolder facts,
            Path stateDir,
            Clock clock) {
        return new CanaryProbe(
                config,
                "H200",
                engine,
                facts,
                new SnapshotOracle(null, JsonMapper.builder().build()),
                new CanaryBaselineStore(
                        new StateDir(stateDir, Clock.systemUTC()),
                        JsonMapper.builder().build()),
                () -> StartTrust.Trust.TRUSTED,
                clock,
                Schedulers.immediate());
    }

    void start(ReadygateProperties.Probe config) {
        start(config, EngineStateMachine.NO_LOOP);
    }

    void start(ReadygateProperties.Probe config, RestartLoop restartLoop) {
        machine = new EngineStateMachine(
                new ReadinessRules(config.successThreshold(), config.failureThreshold()),
                restartLoop,
                clock.instant(),
                change -> {
                    states.add(change.current());
                    if (schedule != null) {
                        schedule.onEngineStateChanged(change);
                    }
                },
                ignored -> {},
                EngineStateMachine.RANDOM_IDS);
        breaker = CircuitBreaker.of("t", ProbeConfiguration.circuitBreakerConfig(config, clock));
        limiter = RateLimiter.of("t", ProbeConfiguration.rateLimiterConfig(config));
        facts = new EngineFactsHolder(machine);
        RepresentativeProbe representative = new RepresentativeProbe(
                config.representative(), engine, facts, new SplittableRandom(1), clock, config.heavyTimeout());
        CanaryProbe canary = canary(config.canary(), engine, facts, stateDir, clock);
        Verifier verifier = new Verifier(
                representative, canary, breaker, limiter, history, report -> {}, clock, config.heavyTimeout());
        LightChecks light = config.generation().enabled()
                ? new LightChecks(
                        config.generation(),
                        new GenerationCheck(
                                config.generation(),
                                engine,
                                facts,
                                new SplittableRandom(2),
                                clock,
                                config.heavyTimeout()),
                        canary,
                        history,
                        report -> {})
                : null;
        schedule = new ProbeSchedule(
                config,
                engine,
                machine,
                verifier,
                light,
                facts,
                new EngineDiscovery(engine, java.util.Optional.empty(), null),
                clock,
                time);
        loop = schedule.observations().subscribe();
    }

    @AfterEach
    void stop() {
        if (loop != null) {
            loop.dispose();
        }
        time.dispose();
    }

    void advance(Duration duration) {
        time.advanceTimeBy(duration);
    }

    @Test
    void newEngineProcessInTheLogEndsThePauseOfAReadyEngineAtOnce() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofSeconds(1)));
        advance(Duration.ofMillis(100));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        int before = engine.healthCalls.get();

        // The log tail reads a new server's header in the middle of the ready engine's 1 s pause.
        machine.apply(new Observation.ProcessStarted(
                clock.instant(), clock.instant(), machine.start().id(), false, "engine log: a new process"));

        // Checked now, and then at the down interval, not a second later.
        assertThat(engine.healthCalls.get()).isEqualTo(before + 1);
        advance(Duration.ofMillis(100));
        assertThat(engine.healthCalls.get()).isEqualTo(before + 6);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
    }

    @Test
    void engineThatComesUpIsReadyInTheCycleItsHealthPasses() {
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        start(probe(1, 100_000));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        advance(Duration.ofMillis(1000));
        assertThat(engine.healthCalls.get()).isEqualTo(11);
        engine.health = ScriptedEngine.ok(null);
        advance(Duration.ofMillis(100));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        assertThat(machine.current().since()).isEqualTo(Instant.ofEpochMilli(1100));
        assertThat(states)
                .extracting(EngineState::kind)
                .containsExactly(
                        EngineState.Kind.DOWN,
                        EngineState.Kind.HEALTHY,
                        EngineState.Kind.MODEL_LISTED,
                        EngineState.Kind.READY);
        assertThat(history.last(ProbeKind.REPRESENTATIVE).measurement().promptTokens())
                .isEqualTo(256);
        assertThat(history.last(ProbeKind.CANARY).detail()).contains("learned");
    }

    @Test
    void metricsAndTheModelListAreAskedAtOnceOnAStartsWayToReady() {
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        start(probe(1, 100_000));
        advance(Duration.ofMillis(1000));
        // Each answers 40 ms late: asked one after the other, the model is listed 80 ms after /health; at once, 40.
        engine.slowOn = time;
        engine.slowBy = Duration.ofMillis(40);
        engine.health = ScriptedEngine.ok(null);
        advance(Duration.ofMillis(1000));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        EngineState healthy = states.stream()
                .filter(state -> state.kind() == EngineState.Kind.HEALTHY)
                .findFirst()
                .orElseThrow();
        EngineState listed = states.stream()
                .filter(state -> state.kind() == EngineState.Kind.MODEL_LISTED)
                .findFirst()
                .orElseThrow();
        assertThat(Duration.between(healthy.since(), listed.since())).isEqualTo(Duration.ofMillis(40));
    }

    @Test
    void readyEngineIsCheckedCheaplyEverySecondAndVerifiedOnlyEveryHeavyInterval() {
        start(probe(1, 100_000));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        int heavyAtStart = engine.completionCalls.get();
        int cheapAtStart = engine.healthCalls.get();
        advance(Duration.ofSeconds(59));
        assertThat(engine.healthCalls.get() - cheapAtStart).isEqualTo(59);
        assertThat(engine.completionCalls.get()).isEqualTo(heavyAtStart);
        advance(Duration.ofSeconds(1));
        assertThat(engine.completionCalls.get()).isEqualTo(heavyAtStart + 2);
    }

    @Test
    void heavyProbesWaitWhileTheEngineIsBusyAtMostAnotherIntervalThenRunUnderLoad() {
        start(probe(1, 100_000));
        int heavy = engine.completionCalls.get();
        engine.running = 4;
        advance(Duration.ofSeconds(110));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy);
        // Two heavy intervals after the last verification: verified under load rather than never.
        advance(Duration.ofSeconds(11));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.running = 0;
        advance(Duration.ofSeconds(50));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
        advance(Duration.ofSeconds(10));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 4);
    }

    @Test
    void succeedingRealTrafficDefersTheHeavyProbesButNeverReplacesThem() {
        start(probe(1, 100_000));
        int heavy = engine.completionCalls.get();
        engine.successes = 100;
        advance(Duration.ofSeconds(61));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy);
        assertThat(machine.current().acceptsTraffic()).isTrue();
        advance(Duration.ofSeconds(60));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
    }

    @Test
    void timeoutWhileOtherRequestsProgressIsBusyNotAFailure() {
        start(probe(1, 100_000));
        engine.completions = request -> Mono.delay(Duration.ofSeconds(30), time)
                .doOnNext(tick -> engine.generated += 500)
                .map(tick -> ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "no event in 30s"));
        engine.running = 0;
        advance(Duration.ofSeconds(60));
        engine.running = 3;
        // The heavy probe started while idle; other requests arrive and progress while it waits.
        advance(Duration.ofSeconds(31));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        assertThat(history.last(ProbeKind.REPRESENTATIVE).outcome()).isEqualTo(ProbeReport.Outcome.BUSY);
    }

    @Test
    void timeoutWithRequestsRunningAndNoProgressIsAStall() {
        start(probe(1, 100_000));
        engine.completions = request -> Mono.delay(Duration.ofSeconds(30), time)
                .map(tick -> ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "no event in 30s"));
        advance(Duration.ofSeconds(60));
        // Two requests running when the probe started on an idle engine timed out: one may be the probe itself (the
        // engine may not have dropped it yet), the other is someone else's that did not advance.
        engine.running = 2;
        advance(Duration.ofSeconds(31));
        assertThat(machine.current()).isInstanceOf(EngineState.Degraded.class);
        assertThat(machine.current().reason()).isEqualTo(Reason.STALLED);
    }

    @Test
    void heavyProbesAreNotDeferredForeverOnTheLoadOfAScrapeThatIsNoLongerAnswered() {
        start(probe(1, 100_000));
        int heavy = engine.completionCalls.get();
        engine.running = 4;
        advance(Duration.ofSeconds(30));
        // The exposition grows past max-body-size: the last sample that came still says 4 requests run.
        engine.metricsAnswer = ScriptedEngine.failure(
                EngineFailure.Kind.BODY_TOO_LARGE,
                "GET /metrics: body larger than readygate.engine.max-body-size (4MB); abandoned");
        advance(Duration.ofSeconds(31));
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
        MetricsEvidence evidence = facts.current().metricsEvidence();
        assertThat(evidence.lost()).containsOnlyKeys(MetricsEvidence.Part.METRICS);
        assertThat(evidence.lost().get(MetricsEvidence.Part.METRICS).why()).contains("max-body-size");
        assertThat(evidence.lost().get(MetricsEvidence.Part.METRICS).since())
                .isBetween(Instant.ofEpochSecond(30), Instant.ofEpochSecond(31));
        assertThat(facts.current().lastSample().requestsRunning()).isEqualTo(4.0);
    }

    @Test
    void restartWhileTheScrapesShowedForeignSeriesIsSeenWhenTheEnginesSeriesComeBack() {
        start(probe(1, 100_000));
        engine.metricsAnswer =
                ScriptedEngine.ok(new EngineMetricsSample(null, null, null, null, null, null, java.util.Map.of()));
        advance(Duration.ofSeconds(2));
        assertThat(facts.current().metricsEvidence().lost()).containsOnlyKeys(MetricsEvidence.Part.METRICS);
        // The engine restarted meanwhile; its own series come back with a new process start time.
        engine.processStart = 2000.0;
        engine.metricsAnswer = null;
        advance(Duration.ofSeconds(1));
        assertThat(states).extracting(EngineState::reason).contains(Reason.ENGINE_RESTARTED);
        assertThat(facts.current().metricsEvidence().lost()).isEmpty();
    }

    @Test
    void refusedConnectionTakesAReadyEngineOutAtOnce() {
        start(probe(1, 100_000));
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(machine.current().since()).isEqualTo(Instant.ofEpochSecond(1));
    }

    @Test
    void engineThatRefusesConnectionsIsCheckedEveryDownIntervalAndSeenWithinIt() {
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofSeconds(1)));
        advance(Duration.ofMillis(1000));
        assertThat(engine.healthCalls.get()).isEqualTo(51);
        engine.health = ScriptedEngine.ok(null);
        advance(Duration.ofMillis(20));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        assertThat(machine.current().since()).isEqualTo(Instant.ofEpochMilli(1020));
    }

    @Test
    void engineWhoseHealthFailsOtherwiseIsCheckedEveryNotReadyInterval() {
        engine.health = ScriptedEngine.status(500);
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofSeconds(1)));
        advance(Duration.ofMillis(1000));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.LISTENING);
        assertThat(engine.healthCalls.get()).isEqualTo(11);
    }

    @Test
    void readyEngineHealthIsCheckedEveryHealthIntervalAndTheRestEveryReadyInterval() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        int health = engine.healthCalls.get();
        int metrics = engine.metricsCalls.get();
        advance(Duration.ofSeconds(10));
        assertThat(engine.healthCalls.get() - health).isEqualTo(50);
        assertThat(engine.metricsCalls.get() - metrics).isEqualTo(10);
    }

    @Test
    void readySglangEngineWhoseHealthGeneratesIsCheckedOncePerReadyIntervalOnly() {
        // SGLang's /health runs a one-token generation (2026 builds): no poll between the full checks.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "sglang"));
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(facts.current().capabilities().surface().dialect()).isEqualTo(EngineDialect.SGLANG);
        int health = engine.healthCalls.get();
        int metrics = engine.metricsCalls.get();
        advance(Duration.ofSeconds(10));
        assertThat(engine.healthCalls.get() - health).isEqualTo(10);
        assertThat(engine.metricsCalls.get() - metrics).isEqualTo(10);
    }

    @Test
    void readyEngineThatDiesIsTakenOutWithinTheHealthInterval() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        advance(Duration.ofMillis(300));
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        advance(Duration.ofMillis(100));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(machine.current().since()).isEqualTo(Instant.ofEpochMilli(400));
    }

    @Test
    void readyEngineWhoseHeldConnectionClosesIsCheckedAtOnceAndTakenOutWhenItRefuses() {
        // Health and full checks an hour apart: only the close can make the check that sees the engine gone.
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofHours(1), Duration.ofHours(1), NO_LIGHT_CHECKS));
        advance(Duration.ofMillis(300));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        engine.closeHeldConnection();
        advance(Duration.ZERO);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(machine.current().since()).isEqualTo(Instant.ofEpochMilli(300));
    }

    @Test
    void heldConnectionClosedByAHealthyEngineCostsOneHealthCheckAndNothingElse() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofHours(1), Duration.ofHours(1), NO_LIGHT_CHECKS));
        advance(Duration.ofMillis(300));
        int health = engine.healthCalls.get();
        engine.closeHeldConnection();
        advance(Duration.ZERO);
        assertThat(engine.healthCalls.get() - health).isEqualTo(1);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        // The next wait is on the next connection; without its close, nothing more until the interval.
        advance(Duration.ofMinutes(10));
        assertThat(engine.healthCalls.get() - health).isEqualTo(1);
        engine.closeHeldConnection();
        advance(Duration.ZERO);
        assertThat(engine.healthCalls.get() - health).isEqualTo(2);
    }

    @Test
    void heldConnectionIsNeverAskedOfAnEngineThatGivesEachConnectionAThread() {
        // llama-server serves every open connection on one of its few HTTP threads: an idle connection held by
        // readygate would take one from real traffic, so a ready llama.cpp engine is polled only.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofHours(1), Duration.ofHours(1), NO_LIGHT_CHECKS));
        advance(Duration.ofMillis(300));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(engine.heldConnectionWaits.get()).isZero();
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        engine.closeHeldConnection();
        advance(Duration.ZERO);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void heldConnectionIsNotWatchedWhileTheEngineIsNotReady() {
        engine.health = ScriptedEngine.status(500);
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofSeconds(1)));
        advance(Duration.ofMillis(1000));
        int health = engine.healthCalls.get();
        engine.closeHeldConnection();
        advance(Duration.ZERO);
        assertThat(engine.healthCalls.get()).isEqualTo(health);
    }

    @Test
    void readyEngineWhoseHealthSays503IsTakenOutWithinTheHealthInterval() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        advance(Duration.ofMillis(300));
        engine.health = ScriptedEngine.status(503);
        advance(Duration.ofMillis(100));
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DEAD);
    }

    @Test
    void sglangWarmingUpIs503BeforeItsFirst200AndIsLoadingNotADeadEngine() {
        // SGLang 2026 builds: /health is 503 (empty body) while server_status is Starting, until its warmup request
        // passed; the dialect is not known yet (discovered once /health passes).
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "sglang"));
        engine.health = ScriptedEngine.status(503);
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        advance(Duration.ofSeconds(2));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.LISTENING);
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_LOADING);
        assertThat(states).extracting(EngineState::reason).doesNotContain(Reason.ENGINE_DEAD);

        engine.health = ScriptedEngine.ok(null);
        advance(Duration.ofSeconds(2));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(facts.current().capabilities().surface().dialect()).isEqualTo(EngineDialect.SGLANG);

        // Once it served, its 503 is a dead (or unhealthy) engine again.
        engine.health = ScriptedEngine.status(503);
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DEAD);
    }

    @Test
    void knownVllmEnginesRestartThatAnswers503IsADeadEngineNotAWarmup() {
        // vLLM's API server builds its engine client before it listens, and its /health answers 503 only for
        // EngineDeadError: no 503 phase at start.
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        advance(Duration.ofMillis(300));
        assertThat(facts.current().capabilities().surface().dialect()).isEqualTo(EngineDialect.VLLM);
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        advance(Duration.ofMillis(300));
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DOWN);
        engine.health = ScriptedEngine.status(503);
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DEAD);
    }

    @Test
    void healthFailuresBetweenFullChecksCountTowardTheFailureThreshold() {
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200)));
        engine.health = ScriptedEngine.status(500);
        advance(Duration.ofMillis(400));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);
        advance(Duration.ofMillis(200));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
    }

    @Test
    void healthThatFailsWithTlsSaysIoErrorAsTheDocsSay() {
        engine.health = ScriptedEngine.failure(
                EngineFailure.Kind.IO_ERROR, "GET /health: TLS failed: SSLHandshakeException: no cipher suites");
        start(probe(1, 100_000));
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void health503TakesAReadyEngineOutAtOnce() {
        start(probe(1, 100_000));
        engine.health = ScriptedEngine.status(503);
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.ENGINE_DEAD);
    }

    @Test
    void otherHealthFailuresNeedTheFailureThreshold() {
        start(probe(1, 100_000));
        engine.health = ScriptedEngine.status(500);
        advance(Duration.ofSeconds(2));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
    }

    @Test
    void newProcessStartTimeMeansARestartThatIsVerifiedAgain() {
        start(probe(1, 100_000));
        int heavy = engine.completionCalls.get();
        engine.processStart = 2000.0;
        advance(Duration.ofSeconds(1));
        assertThat(states)
                .extracting(EngineState::kind)
                .containsSubsequence(
                        EngineState.Kind.READY,
                        EngineState.Kind.HEALTHY,
                        EngineState.Kind.MODEL_LISTED,
                        EngineState.Kind.READY);
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
    }

    @Test
    void countersThatGoDownMeanARestartWhenThereIsNoProcessStartTime() {
        engine.processStartKnown = false;
        start(probe(1, 100_000));
        engine.generated = 5000;
        advance(Duration.ofSeconds(1));
        int heavy = engine.completionCalls.get();
        engine.generated = 12;
        advance(Duration.ofSeconds(1));
        assertThat(states).extracting(EngineState::reason).contains(Reason.ENGINE_RESTARTED);
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
    }

    @Test
    void anotherVllmVersionMeansAnotherEngine() {
        start(probe(1, 100_000));
        int heavy = engine.completionCalls.get();
        engine.version = "0.32.0";
        advance(Duration.ofSeconds(31));
        assertThat(states)
                .filteredOn(state -> state.reason() == Reason.ENGINE_RESTARTED)
                .singleElement()
                .extracting(state -> ((EngineState.Healthy) state).detail())
                .isEqualTo("vLLM version changed from 0.31.0 to 0.32.0");
        assertThat(engine.completionCalls.get()).isEqualTo(heavy + 2);
    }

    @Test
    void repeatedFailuresSuspendHeavyProbesWhileCheapChecksGoOn() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        start(probe(1, 100_000));
        assertThat(machine.current().reason()).isEqualTo(Reason.HTTP_STATUS);
        advance(Duration.ofSeconds(10));
        // Three failures open the breaker (suspend-after-failures 3): no more heavy probes for 30 s.
        assertThat(engine.completionCalls.get()).isEqualTo(3);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(history.lastSkipped()).contains("suspended");
        int cheap = engine.healthCalls.get();
        advance(Duration.ofSeconds(10));
        assertThat(engine.healthCalls.get() - cheap).isEqualTo(100);
        engine.completions = ScriptedEngine::correct;
        advance(Duration.ofSeconds(15));
        assertThat(machine.current().acceptsTraffic()).isTrue();
    }

    /**
     * Why a heavy probe was skipped is said only while it is true: once the breaker let a verification through and
     * closed, {@code /status} no longer says the heavy probes are suspended (the page said "circuit breaker open" long
     * after it closed, issue 25 item 9).
     */
    @Test
    void aSkippedHeavyProbeIsNoLongerReportedOnceTheBreakerClosed() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        start(probe(1, 100_000));
        advance(Duration.ofSeconds(10));
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(history.lastSkipped()).contains("circuit breaker open");
        engine.completions = ScriptedEngine::correct;
        advance(Duration.ofSeconds(35));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(history.lastSkipped()).isNull();
    }

    @Test
    void engineThatRestartsIsVerifiedAtOnceEvenWhileHeavyProbesAreSuspended() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        start(probe(1, 100_000));
        advance(Duration.ofSeconds(10));
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        // The engine restarts (a new process start time) and serves correctly: no waiting for the suspension to end.
        engine.completions = ScriptedEngine::correct;
        engine.processStart = 2000.0;
        advance(Duration.ofMillis(100));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void aReadyEngineWhoseModelIsNoLongerListedIsDegradedThenOutAndBackWhenListedAgain() {
        start(probe(1, 100_000));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.model = ScriptedEngine.ok(new ModelCard("another-model", "root", 4096));
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DEGRADED);
        assertThat(machine.current().reason()).isEqualTo(Reason.MODEL_NOT_LISTED);
        assertThat(((EngineState.Degraded) machine.current()).detail())
                .isEqualTo("/v1/models lists another-model, not the served m");
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096));
        advance(Duration.ofSeconds(1));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        engine.model = ScriptedEngine.status(404);
        advance(Duration.ofSeconds(3));
        // Out after three failed listings; a verification (which names the model) is what brings it back.
        assertThat(states)
                .filteredOn(state -> state.kind() == EngineState.Kind.NOT_READY)
                .singleElement()
                .extracting(EngineState::reason)
                .isEqualTo(Reason.MODEL_NOT_LISTED);
    }

    @Test
    void aBusyEngineWhoseModelListingAnswersLateIsStillReady() {
        // A saturated engine can answer /v1/models after the cheap checks' timeout: no answer says nothing of its
        // model (llama-server on a loaded machine, one slot busy, went not_ready model_not_listed before).
        start(probe(1, 100_000));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        int before = states.size();
        engine.model = ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "GET /v1/models: no complete answer");
        advance(Duration.ofSeconds(10));
        assertThat(states.subList(before, states.size())).allMatch(EngineState::acceptsTraffic);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void attemptsTheSuspensionRefusesTakeNoTokenBudget() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        start(probe(1, 100_000));
        advance(Duration.ofSeconds(3));
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        int left = limiter.getMetrics().getAvailablePermissions();
        advance(Duration.ofSeconds(20));
        // Twenty due verifications refused by the open breaker: nothing sent, nothing spent.
        assertThat(history.lastSkipped()).contains("suspended");
        assertThat(engine.completionCalls.get()).isEqualTo(3);
        assertThat(limiter.getMetrics().getAvailablePermissions()).isEqualTo(left);
    }

    @Test
    void tokenBudgetCapsHeavyProbesPerMinute() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        start(new ReadygateProperties.Probe(
                Duration.ofMillis(100),
                Duration.ofMillis(100),
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                Duration.ofSeconds(60),
                Duration.ofSeconds(1),
                Duration.ofSeconds(30),
                1,
                3,
                600,
                100,
                Duration.ofSeconds(30),
                new ReadygateProperties.Representative(true, new TokenBudget(256, null), 16, 0, null, null),
                new ReadygateProperties.Canary(false, "x", 1, 0, List.of(), null, null, 0.01, 0.1, true, true),
                NO_LIGHT_CHECKS));
        advance(Duration.ofSeconds(30));
        // 272 tokens per attempt against 600 per minute: two attempts, then wait for the next minute.
        assertThat(engine.completionCalls.get()).isEqualTo(2);
        assertThat(history.lastSkipped()).contains("token budget");
        // Resilience4j's rate limiter refills on the JVM's nanosecond clock, not on virtual time: the refill itself
        // is Resilience4j's to test.
    }

    @Test
    void wrongCanaryAnswerIsLatchedUntilTheEngineRestarts() throws Exception {
        start(probe(1, 100_000));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        // The engine restarts with other weights: the canary answers differently.
        engine.completions = ProbeScheduleTests::wrongWeights;
        engine.processStart = 3000.0;
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.CANARY_MISMATCH);
        int heavy = engine.completionCalls.get();
        advance(Duration.ofSeconds(120));
        assertThat(machine.current().reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(engine.completionCalls.get()).isEqualTo(heavy);
        assertThat(history.last(ProbeKind.CANARY).canary().expected().tokenIds())
                .containsExactly(300);
    }

    @Test
    void aModelTheOperatorAcceptsServesAndItsAnswerBecomesTheBaselineWithAnAuditLine() throws Exception {
        start(probe(1, 100_000));
        engine.completions = ProbeScheduleTests::wrongWeights;
        engine.processStart = 3000.0;
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.CANARY_MISMATCH);

        // readygate accept-model, while readygate runs (it holds the state directory's lock).
        ModelAcceptance.Request request = new ModelAcceptance(
                        stateDir, JsonMapper.builder().build())
                .request("alice", "swapped to the fine-tune", clock.instant());
        advance(Duration.ofSeconds(35));

        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(stateDir.resolve(ModelAcceptance.REQUEST)).doesNotExist();
        tools.jackson.databind.JsonNode audit =
                new ModelAcceptance(stateDir, JsonMapper.builder().build()).outcome(request.id());
        assertThat(audit).isNotNull();
        assertThat(audit.path("outcome").asString()).isEqualTo("accepted");
        assertThat(audit.path("by").asString()).isEqualTo("alice");
        assertThat(audit.path("reason").asString()).isEqualTo("swapped to the fine-tune");
        assertThat(audit.path("previousBaseline").asString()).contains("[300]");
        assertThat(audit.path("baseline").asString()).contains("[999]");
        // The accepted answer is the baseline now: the engine stays ready on it.
        advance(Duration.ofSeconds(120));
        assertThat(machine.current().acceptsTraffic()).isTrue();
        assertThat(history.last(ProbeKind.CANARY).canary().expected().tokenIds())
                .containsExactly(999);
    }

    @Test
    void aStartWhoseModelTheOperatorAcceptsIsNotHeldAsARestartLoopsStart() throws Exception {
        // Two starts make a loop here: the restart with the new weights would be held for a minute.
        start(
                probe(1, 100_000),
                new RestartLoop(Duration.ofMinutes(10), 2, Duration.ofSeconds(60), Duration.ofMinutes(10)));
        engine.completions = ProbeScheduleTests::wrongWeights;
        engine.processStart = 3000.0;
        advance(Duration.ofSeconds(1));
        assertThat(machine.current().reason()).isEqualTo(Reason.CANARY_MISMATCH);

        new ModelAcceptance(stateDir, JsonMapper.builder().build()).request("alice", "fine-tune", clock.instant());
        advance(Duration.ofSeconds(35));

        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        assertThat(machine.restartLoop().looping(clock.instant())).isFalse();
    }

    static final String PLAIN_MISSING = "POST /v1/completions answered 404: Not Found: this server does not offer it";

    @Test
    void aChatOnlyServerIsVerifiedThroughChatCompletionsWithProvenTokenCounts() {
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            sent.add(request);
            return request.chat()
                    ? ScriptedEngine.correct(request)
                    : Mono.just(ScriptedEngine.failure(EngineFailure.Kind.NOT_SUPPORTED, PLAIN_MISSING));
        };
        start(probe(1, 100_000));

        assertThat(machine.current().acceptsTraffic()).isTrue();
        EngineCapabilities capabilities = facts.current().capabilities();
        assertThat(capabilities.generation()).isEqualTo(EngineCapabilities.Generation.CHAT);
        assertThat(capabilities.describe().get("completions"))
                .startsWith("missing: " + PLAIN_MISSING + "; the probes go through POST /v1/chat/completions");
        assertThat(capabilities.capabilities(null).get("promptTokens")).startsWith("proven by calibration");
        // One plain request found it missing; every request since went through chat, none with token ids.
        assertThat(sent.stream().filter(request -> !request.chat())).hasSize(1);
        assertThat(sent.stream().filter(CompletionRequest::chat)).allMatch(request -> request.promptText() != null);
        assertThat(history.last(ProbeKind.REPRESENTATIVE).detail()).contains("prompt count exact");
        assertThat(history.last(ProbeKind.CANARY).detail()).contains("learned");
    }

    /**
     * Plain completions served this start, then answer 404 (a proxy in front of a broken engine, LlamaServerIT's
     * hidden endpoint): a fault the light checks see, not a server without them. Before, the probes went over to chat
     * completions, which answered, and the engine stayed ready.
     */
    @Test
    void plainCompletionsThatAnsweredOnThisStartAndThen404AreAFaultNotAChatOnlyServer() {
        AtomicBoolean broken = new AtomicBoolean();
        engine.completions = request -> !request.chat() && broken.get()
                ? Mono.just(ScriptedEngine.failure(EngineFailure.Kind.NOT_SUPPORTED, PLAIN_MISSING))
                : ScriptedEngine.correct(request);
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();

        broken.set(true);
        advance(Duration.ofSeconds(10));

        assertThat(machine.current().acceptsTraffic()).isFalse();
        assertThat(machine.current().reason()).isEqualTo(Reason.GENERATION_FAILED);
        assertThat(facts.current().capabilities().generation()).isEqualTo(EngineCapabilities.Generation.COMPLETIONS);
    }

    @Test
    void aServerWithNeitherCompletionsIsNeverReadyAndTheReasonNamesWhatItLacks() {
        engine.completions = request -> Mono.just(ScriptedEngine.failure(
                EngineFailure.Kind.NOT_SUPPORTED,
                (request.chat() ? "POST /v1/chat/completions" : "POST /v1/completions")
                        + " answered 404: Not Found: this server does not offer it"));
        start(probe(1, 100_000));
        advance(Duration.ofSeconds(60));

        assertThat(machine.current().acceptsTraffic()).isFalse();
        assertThat(machine.current().reason()).isEqualTo(Reason.HTTP_STATUS);
        assertThat(((EngineState.VerificationFailed) machine.current()).detail())
                .contains("the engine offers neither plain nor chat completions")
                .contains("POST /v1/completions answered 404")
                .contains("POST /v1/chat/completions answered 404");
    }

    /** Three starts in a minute make a restart loop; its third start is held for a minute. */
    static final RestartLoop THREE_STARTS =
            new RestartLoop(Duration.ofMinutes(10), 3, Duration.ofSeconds(60), Duration.ofMinutes(10));

    @Test
    void restartsThatEachServeAnotherModelAreModelSwapsNotARestartLoop() {
        start(probe(1, 100_000), THREE_STARTS);
        assertThat(machine.current().acceptsTraffic()).isTrue();
        for (int swap = 1; swap <= 3; swap++) {
            // Another model copied over the same path: the same name, another identity (llama.cpp's meta).
            engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "vllm", "n_params=" + swap));
            engine.processStart = 1000.0 + 1000 * swap;
            advance(Duration.ofSeconds(2));
            assertThat(machine.current().kind()).as("swap %d", swap).isEqualTo(EngineState.Kind.READY);
        }
        assertThat(machine.restartLoop().looping(clock.instant())).isFalse();
    }

    @Test
    void restartsThatServeTheSameModelAgainAreStillARestartLoop() {
        start(probe(1, 100_000), THREE_STARTS);
        List<EngineState.Kind> kinds = new ArrayList<>();
        for (int restart = 1; restart <= 3; restart++) {
            engine.processStart = 1000.0 + 1000 * restart;
            advance(Duration.ofSeconds(2));
            kinds.add(machine.current().kind());
        }
        assertThat(kinds).contains(EngineState.Kind.HELD);
        assertThat(machine.restartLoop().looping(clock.instant())).isTrue();
    }

    /**
     * Issue 24, item 5: readygate first saw the engine running; its {@code process_start_time_seconds} says it began 2 s
     * before, and it restarted 2 s after: a crash loop's second start, held. Before, the first seen start's beginning
     * was taken as unknown and the restart served.
     */
    @Test
    void aRestartSoonAfterAFirstSeenStartItsProcessStartTimeDatesIsHeld() {
        advance(Duration.ofHours(2));
        engine.processStart = 7198.0;
        start(probe(1, 100_000), THREE_STARTS);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        engine.processStart = 7202.0;
        advance(Duration.ofSeconds(2));
        assertThat(states).extracting(EngineState::reason).contains(Reason.ENGINE_RESTARTED);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.HELD);
    }

    /**
     * The same restart of a first seen start whose process started an hour before readygate looked (its first scrape
     * says so): a single restart, served; without that date it would count from readygate's first look and be held.
     */
    @Test
    void aRestartOfAFirstSeenStartWhoseProcessStartedAnHourBeforeIsNotHeld() {
        advance(Duration.ofHours(2));
        engine.processStart = 3600.0;
        start(probe(1, 100_000), THREE_STARTS);
        engine.processStart = 7202.0;
        advance(Duration.ofSeconds(2));
        assertThat(states).extracting(EngineState::reason).contains(Reason.ENGINE_RESTARTED);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        // The first start, an hour old, is out of the loop's window.
        assertThat(machine.restartLoop().recent()).hasSize(1);
    }

    /** The engine answers every completion correctly; the list has each request it was sent. */
    List<CompletionRequest> answeredCorrectly() {
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            sent.add(request);
            return ScriptedEngine.correct(request);
        };
        return sent;
    }

    /** The defaults of the cadences that matter here (health every 200 ms, full checks every second), light checks on. */
    static ReadygateProperties.Probe withLightChecks() {
        return probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), LIGHT_CHECKS);
    }

    static Mono<EngineCall<StreamedCompletion>> errorEvent(CompletionRequest request) {
        return Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                0,
                "",
                List.of(),
                List.of(),
                null,
                5,
                0,
                "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                Duration.ZERO,
                Duration.ZERO,
                Duration.ZERO,
                Duration.ofMillis(3))));
    }

    @Test
    void aReadyIdleEngineIsCheckedLightlyEveryTwoSecondsAlternatingTheGenerationCheckAndTheCanary() {
        List<CompletionRequest> sent = answeredCorrectly();
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        sent.clear();
        advance(Duration.ofSeconds(59));
        // One light check every 2 s after the one at readiness (no heavy probe before 60 s), every second the canary.
        List<CompletionRequest> light = List.copyOf(sent);
        assertThat(light).hasSize(29);
        assertThat(light).filteredOn(request -> request.seed() != null).hasSize(15);
        List<CompletionRequest> generation =
                light.stream().filter(request -> request.seed() == null).toList();
        assertThat(generation).allSatisfy(request -> {
            assertThat(request.maxTokens()).isEqualTo(2);
            assertThat(request.minTokens()).isEqualTo(2);
            assertThat(request.ignoreEos()).isTrue();
            assertThat(request.promptText()).isNotBlank();
        });
        // A fresh prompt every time.
        assertThat(generation).extracting(CompletionRequest::promptText).doesNotHaveDuplicates();
        assertThat(history.last(ProbeKind.GENERATION).passed()).isTrue();
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void generationThatFailsOnAReadyIdleEngineIsSeenWithinSecondsWithItsOwnReason() {
        start(withLightChecks());
        advance(Duration.ofMillis(700));
        engine.completions = ProbeScheduleTests::errorEvent;
        Instant failed = clock.instant();
        advance(Duration.ofMillis(2600));
        // Out after three light checks in a row (the retrying heavy verification may then say error_event).
        EngineState out = states.stream()
                .filter(state -> state.kind() == EngineState.Kind.NOT_READY)
                .findFirst()
                .orElseThrow();
        assertThat(out.reason()).isEqualTo(Reason.GENERATION_FAILED);
        assertThat(((EngineState.NotReady) out).detail()).contains("error event");
        assertThat(Duration.between(failed, out.since())).isLessThanOrEqualTo(Duration.ofMillis(2600));
        assertThat(machine.current().acceptsTraffic()).isFalse();
        // It recovers by a verification once generation works again.
        engine.completions = ScriptedEngine::correct;
        advance(Duration.ofSeconds(2));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void aGpuFaultThatClearsWhileHeavyProbesAreSuspendedIsVerifiedAgainWithinSecondsUnderOneReason() {
        start(withLightChecks());
        advance(Duration.ofMillis(700));
        engine.completions = ProbeScheduleTests::errorEvent;
        advance(Duration.ofSeconds(10));
        // Out, and the heavy probes' retries failed often enough to suspend them (suspend-after-failures 3) for 30 s.
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        // One fault, one word: the heavy probes' error event is the light checks' generation_failed.
        assertThat(states)
                .filteredOn(state -> state.kind() == EngineState.Kind.NOT_READY)
                .extracting(EngineState::reason)
                .containsOnly(Reason.GENERATION_FAILED);
        int sent = engine.completionCalls.get();
        advance(Duration.ofSeconds(4));
        // While the fault lasts, a light check every two seconds tries the engine; no heavy probe is sent.
        assertThat(engine.completionCalls.get() - sent).isEqualTo(2);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        // The fault clears: the next trial passes and the verification runs at once (the breaker's half-open trial),
        // not after the 30 s suspension.
        engine.completions = ScriptedEngine::correct;
        advance(Duration.ofSeconds(3));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void aFaultOnlyTheHeavyProbesSeeWaitsOutTheSuspensionThoughTheLightChecksPass() {
        start(withLightChecks());
        advance(Duration.ofMillis(700));
        // Only the representative probe (16 output tokens) fails; the light checks' two tokens pass.
        engine.completions = request ->
                request.maxTokens() > 2 ? Mono.just(ScriptedEngine.status(500)) : ScriptedEngine.correct(request);
        advance(Duration.ofSeconds(62));
        advance(Duration.ofSeconds(10));
        assertThat(machine.current().reason()).isEqualTo(Reason.HTTP_STATUS);
        assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
        int sent = engine.completionCalls.get();
        advance(Duration.ofSeconds(10));
        // A passing light check is no evidence against this fault: no trial, no verification while suspended.
        assertThat(engine.completionCalls.get()).isEqualTo(sent);
    }

    @Test
    void inferenceThatHangsOnAReadyIdleEngineIsSeenWithinFiveSeconds() {
        start(withLightChecks());
        advance(Duration.ofMillis(1300));
        engine.hangOn = time;
        Instant hung = clock.instant();
        advance(Duration.ofSeconds(5));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
        assertThat(machine.current().reason()).isEqualTo(Reason.GENERATION_TIMED_OUT);
        assertThat(Duration.between(hung, machine.current().since())).isLessThanOrEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aSleepingEngineIsNotReadyAndNotProbedUntilItWakesThenIsVerifiedAgain() {
        start(withLightChecks());
        advance(Duration.ofMillis(1300));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.READY);
        int before = states.size();
        String start = java.util.Objects.requireNonNull(machine.start()).id();
        // Put to sleep (vLLM's POST /sleep?level=1): a completion waits for the wake, as vLLM queues it.
        engine.sleepLevel = 1;
        engine.hangOn = time;
        advance(Duration.ofSeconds(20));
        assertThat(machine.current()).isInstanceOfSatisfying(EngineState.Sleeping.class, sleeping -> {
            assertThat(sleeping.level()).isEqualTo(1);
            assertThat(sleeping.detail()).contains("weights_offloaded");
        });
        assertThat(machine.current().reason()).isEqualTo(Reason.SLEEPING);
        // Issue 29 item 1: a light check that waited on the sleeping engine is no failure of it.
        assertThat(states.subList(before, states.size()))
                .extracting(EngineState::kind)
                .containsExactly(EngineState.Kind.SLEEPING);
        int probed = engine.completionCalls.get();
        advance(Duration.ofSeconds(60));
        assertThat(engine.completionCalls.get())
                .as("nothing probed while asleep")
                .isEqualTo(probed);
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.SLEEPING);
        // Issue 29 item 2: awake again, verified as a start is before it serves.
        engine.hangOn = null;
        engine.sleepLevel = 0;
        advance(Duration.ofSeconds(5));
        assertThat(states.subList(before, states.size()))
                .extracting(EngineState::kind)
                .containsExactly(EngineState.Kind.SLEEPING, EngineState.Kind.MODEL_LISTED, EngineState.Kind.READY);
        assertThat(engine.completionCalls.get()).isGreaterThan(probed);
        // Issue 29 item 3: the wake is a start of its own (recorded as path wake), of the same process, no restart.
        EngineStart wake = java.util.Objects.requireNonNull(machine.start());
        assertThat(wake.id()).isNotEqualTo(start);
        assertThat(wake.wake()).isTrue();
        assertThat(wake.slept()).isNotNull();
        assertThat(wake.slept().level()).isEqualTo(1);
        assertThat(machine.restartLoop().recent()).hasSize(1);
    }

    /**
     * A CPU engine: every answer correct, prefill 20 ms a prompt token (the representative probe's 256: a TTFT of
     * 5.12 s) and 300 ms a token after the first.
     */
    static Mono<EngineCall<StreamedCompletion>> slowCpu(CompletionRequest request) {
        int prompt = request.promptTokenIds() != null
                ? request.promptTokenIds().size()
                : request.promptText().split(" ").length + 1;
        Duration ttft = Duration.ofMillis(20L * prompt);
        Duration itl = request.maxTokens() > 1 ? Duration.ofMillis(300) : Duration.ZERO;
        List<Integer> ids = java.util.stream.IntStream.range(0, request.maxTokens())
                .map(i -> 300 + i)
                .boxed()
                .toList();
        return Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                request.maxTokens(),
                " ok".repeat(request.maxTokens()),
                ids,
                ids.stream().map(i -> -0.5).toList(),
                "length",
                prompt,
                request.maxTokens(),
                null,
                ttft,
                itl,
                itl,
                ttft.plus(itl.multipliedBy(request.maxTokens() - 1)))));
    }

    @Test
    void aLightChecksBudgetFollowsTheSpeedTheRepresentativeProbeMeasuredOnThisStart() {
        List<Duration> budgets = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            budgets.add(engine.lastTimeout);
            return slowCpu(request);
        };
        start(withLightChecks());
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);

        advance(Duration.ofSeconds(5));

        // The heavy probes wait heavy-timeout; the light checks after them 4 × (5120 ms × 8/256 + 2 × 300 ms) (the
        // generation check) and 4 × (5120 ms × 16/256 + 300 ms) (the canary in its place), as the representative
        // probe measured, and then as each generation check on the idle engine measured (5 prompt tokens in 100 ms:
        // the same speed), not generation.timeout's 750 ms, a GPU's budget that such an engine misses at every check.
        assertThat(budgets)
                .containsExactly(
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        Duration.ofMillis(3040),
                        Duration.ofMillis(2480),
                        Duration.ofMillis(3040));
        assertThat(facts.current().speed())
                .isEqualTo(new EngineFacts.Speed(5, Duration.ofMillis(100), Duration.ofMillis(300)));
        assertThat(history.last(ProbeKind.GENERATION).detail())
                .endsWith("within a budget of 3040 ms (the measured speed)");
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void aStreamPastWhatWasAskedFailsAtOnceWithItsOwnReasonWithoutMetricsToo() {
        start(withLightChecks());
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        advance(Duration.ofMillis(700));
        // No /metrics from now on: a timeout could not be judged, but an overlong stream needs no judging.
        engine.metricsSupported = false;
        List<Instant> sent = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            sent.add(clock.instant());
            return Mono.just(ScriptedEngine.failure(
                    EngineFailure.Kind.OVERLONG_STREAM,
                    "the stream ran past what was asked: 11 events for max_tokens 2 (at most 10 with those that carry"
                            + " no token); cut"));
        };
        Instant broke = clock.instant();

        advance(Duration.ofMillis(2700));

        EngineState out = states.stream()
                .filter(state -> state.kind() == EngineState.Kind.NOT_READY)
                .findFirst()
                .orElseThrow();
        assertThat(out.reason()).isEqualTo(Reason.OVERLONG_STREAM);
        assertThat(((EngineState.NotReady) out).detail()).contains("ran past what was asked");
        // failure-threshold light checks, each at the next cycle after the last: no heavy-timeout waited out.
        assertThat(sent).filteredOn(at -> !at.isAfter(out.since())).hasSize(3);
        assertThat(Duration.between(broke, out.since())).isLessThanOrEqualTo(Duration.ofMillis(1700));
        assertThat(history.lastFailure(ProbeKind.GENERATION).reason()).isEqualTo(Reason.OVERLONG_STREAM);
    }

    /** llama-server's series: one request decoding in its slot, {@code waiting} deferred behind it. */
    static EngineMetricsSample llamaCppSample(double waiting, double decodeSteps) {
        return llamaCppSample(1, waiting, decodeSteps);
    }

    /** llama-server's series: {@code processing} slots taken, {@code waiting} deferred behind them. */
    static EngineMetricsSample llamaCppSample(double processing, double waiting, double decodeSteps) {
        return new EngineMetricsSample(
                null,
                processing,
                waiting,
                10.0,
                10.0,
                null,
                java.util.Map.of(),
                java.util.Set.of("llamacpp:"),
                decodeSteps,
                null);
    }

    /** {@code seconds} of llama-server's slots taken, their requests advancing (100 decode steps a second). */
    void slotsTakenAndAdvancing(int seconds, double processing, double waiting) {
        for (int second = 0; second < seconds; second++) {
            engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(processing, waiting, 1000 + 100 * second));
            advance(Duration.ofSeconds(1));
        }
    }

    @Test
    void aLightCheckThatWouldWaitForALlamaCppSlotHoldingAnHttpThreadIsPutOffUntilNoRequestWaits() {
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(1, 100));
        advance(Duration.ofMillis(2100));
        int sent = engine.completionCalls.get();
        // Every slot taken and a request waiting: a light check would wait too, holding one of the few HTTP threads.
        slotsTakenAndAdvancing(10, 1, 1);
        assertThat(engine.completionCalls.get()).isEqualTo(sent);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        // Nothing waits any more: the light checks resume.
        engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(0, 5000));
        advance(Duration.ofSeconds(3));
        assertThat(engine.completionCalls.get()).isGreaterThan(sent);
    }

    @Test
    void aLightCheckIsPutOffWhileEveryLlamaCppSlotIsTakenEvenWithNothingWaiting() {
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 2);
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.metricsAnswer = ScriptedEngine.ok(new EngineMetricsSample(
                null, 2.0, 0.0, 10.0, 10.0, null, java.util.Map.of(), java.util.Set.of("llamacpp:"), 100.0, null));
        advance(Duration.ofMillis(2100));
        int sent = engine.completionCalls.get();
        slotsTakenAndAdvancing(10, 2, 0);
        assertThat(engine.completionCalls.get()).isEqualTo(sent);
        // One of the two slots frees: the light checks resume.
        engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(1, 0, 5000));
        advance(Duration.ofSeconds(3));
        assertThat(engine.completionCalls.get()).isGreaterThan(sent);
    }

    @Test
    void aLightCheckPutOffIsJudgedFromLlamaServersDecodeStepsBusyWhileTheyMove() {
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        int sent = engine.completionCalls.get();
        // The slot stays taken for 20 s and its request advances: a decode step every 10 ms.
        slotsTakenAndAdvancing(20, 1, 1);
        assertThat(engine.completionCalls.get()).isEqualTo(sent);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        ProbeReport last = history.last(ProbeKind.GENERATION);
        assertThat(last.outcome()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail())
                .startsWith("light check put off, every slot taken (1 requests processing, 1 deferred)");
        assertThat(last.detail()).containsPattern("[0-9]+ decode steps in [0-9]+ s");
    }

    @Test
    void aLlamaServerWhoseSlotsStayTakenWithoutADecodeStepIsStalledThoughNoLightCheckIsSent() {
        // Every slot taken and the light checks put off: before, a stall there went unseen until a slot freed.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        List<CompletionRequest> sent = answeredCorrectly();
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        sent.clear();
        engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(1, 500));
        // failure-threshold (3) windows of generation.interval (2 s) with no decode step, after the first put off.
        advance(Duration.ofSeconds(9));
        assertThat(states).anySatisfy(state -> {
            assertThat(state).isInstanceOf(EngineState.NotReady.class);
            assertThat(state.reason()).isEqualTo(Reason.GENERATION_STALLED);
        });
        // No light check was sent (the scripted engine's heavy probes, once not ready, answer at once).
        assertThat(sent).noneMatch(request -> request.maxTokens() == 2);
        assertThat(history.last(ProbeKind.GENERATION).detail())
                .isEqualTo("light check put off, every slot taken (1 requests processing, 1 deferred): no decode step"
                        + " in 2 s, the requests in its slots advance no more");
    }

    /** llama-server's {@code /slots}: one slot, held by task 7 that generated {@code decoded} tokens (or free). */
    static SlotsSample oneSlot(boolean held, long decoded) {
        return new SlotsSample(List.of(new SlotsSample.Slot(0, held ? 7 : -1, held, decoded)));
    }

    @Test
    void withoutMetricsALightCheckIsPutOffWhileLlamaServersSlotsSaySlotsAreTakenAndJudgedFromThem() {
        // Issue 24: llama-server -np 1 without --metrics, one client streaming: a light check sent then waits for the
        // slot holding one of the server's few HTTP threads. /slots says the slot is taken: none is sent.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        engine.slotsAnswer = oneSlot(false, 0);
        List<CompletionRequest> sent = answeredCorrectly();
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.slotsAnswer = oneSlot(true, 0);
        advance(Duration.ofMillis(2100));
        sent.clear();
        int ready = states.size();
        for (int second = 0; second < 70; second++) {
            engine.slotsAnswer = oneSlot(true, 100L * second);
            advance(Duration.ofSeconds(1));
        }
        assertThat(sent).as("no light check sent").noneMatch(request -> request.maxTokens() == 2);
        assertThat(states.subList(ready, states.size())).allMatch(EngineState::acceptsTraffic);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        ProbeReport last = history.last(ProbeKind.GENERATION);
        assertThat(last.outcome()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail())
                .startsWith("light check put off, every slot taken (1 of 1 processing, as /slots says): ")
                .containsPattern("[0-9]+ tokens generated in [0-9]+ s");
        // The slot frees: the light checks resume.
        engine.slotsAnswer = oneSlot(false, 0);
        advance(Duration.ofSeconds(3));
        assertThat(sent).anyMatch(request -> request.maxTokens() == 2);
    }

    @Test
    void withoutMetricsASlotThatStaysTakenWithoutATokenIsStalled() {
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        engine.slotsAnswer = oneSlot(false, 0);
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.slotsAnswer = oneSlot(true, 500);
        advance(Duration.ofMinutes(3));
        assertThat(states).anySatisfy(state -> assertThat(state.reason()).isEqualTo(Reason.GENERATION_STALLED));
        assertThat(history.last(ProbeKind.GENERATION).detail())
                .contains("no token generated in")
                .contains("the requests in its slots advance no more");
    }

    // --- issue 24: a light check that a client's request queues behind the only slot ---

    /**
     * llama-server's one slot, taken by a client from {@code from} (virtual time) for {@code held}: a completion sent
     * meanwhile waits in the server's queue and is answered once the slot frees, or times out at its own timeout.
     */
    void slotHeld(Instant from, Duration held, List<CompletionRequest> sent) {
        engine.completions = request -> {
            sent.add(request);
            return answeredOnceFree(request, from.plus(held));
        };
    }

    /** A request behind a client that holds the only slot until {@code free}: answered then, or never in its timeout. */
    Mono<EngineCall<StreamedCompletion>> answeredOnceFree(CompletionRequest request, Instant free) {
        Instant now = clock.instant();
        if (!now.isBefore(free)) {
            return ScriptedEngine.correct(request);
        }
        Duration wait = Duration.between(now, free);
        return wait.compareTo(java.util.Objects.requireNonNull(engine.lastTimeout)) < 0
                ? Mono.delay(wait, time).then(ScriptedEngine.correct(request))
                : noEventWithinItsTimeout();
    }

    /** A completion that waits in the engine's queue: no event within the timeout it was sent with. */
    Mono<EngineCall<StreamedCompletion>> noEventWithinItsTimeout() {
        Duration timeout = java.util.Objects.requireNonNull(engine.lastTimeout);
        return Mono.delay(timeout, time)
                .map(tick -> ScriptedEngine.failure(
                        EngineFailure.Kind.TIMED_OUT,
                        "POST /v1/completions: no event yet within " + timeout.toMillis() + " ms"));
    }

    /** Runs the schedule until the next light check is sent (in steps of 100 ms, at most 4 s). */
    void untilSent(List<CompletionRequest> sent) {
        for (int i = 0; i < 40 && sent.isEmpty(); i++) {
            advance(Duration.ofMillis(100));
        }
        assertThat(sent).hasSize(1);
    }

    @Test
    void aLightCheckQueuedBehindAClientThatTookTheOnlySlotRightAfterTheScrapeIsBusyNotTimedOut() {
        // The race of issue 24: the cycle's scrape shows the one slot free, the light check is sent, and a client's
        // request takes the slot first; the check waits in llama-server's queue (requests_deferred 1) while the
        // client's request advances. Before: "no more decode steps than its own" on an engine idle before the check,
        // generation_timed_out.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(0, 0, 1000));
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), GENERATION_CHECKS_ONLY));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            sent.add(request);
            // Taken right after the scrape read it free: the check is deferred, the client's request decodes.
            engine.metricsAnswer = ScriptedEngine.ok(llamaCppSample(1, 1, 1003));
            return noEventWithinItsTimeout();
        };
        int ready = states.size();
        untilSent(sent);
        advance(Duration.ofMillis(800));

        ProbeReport last = history.last(ProbeKind.GENERATION);
        assertThat(last.outcome()).as(last.detail()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail()).contains("1 requests running, 1 waiting");
        assertThat(states.subList(ready, states.size())).allMatch(state -> state instanceof EngineState.Ready);
    }

    @Test
    void withSlotsALightCheckQueuedBehindAClientThatTookTheOnlySlotRightAfterTheReadingIsBusyNotTimedOut() {
        // The same race without /metrics: /slots read the slot free, the client took it, the check waited heavy-timeout
        // for it. /slots read again when it timed out shows the slot taken by a request that advances.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        engine.slotsAnswer = oneSlot(false, 0);
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), GENERATION_CHECKS_ONLY));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            sent.add(request);
            return noEventWithinItsTimeout();
        };
        int ready = states.size();
        untilSent(sent);
        for (int second = 0; second < 32; second++) {
            engine.slotsAnswer = oneSlot(true, 10L * second);
            advance(Duration.ofSeconds(1));
        }

        ProbeReport last = history.last(ProbeKind.GENERATION);
        assertThat(last.outcome()).as(last.detail()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail()).contains("every slot taken (1 of 1 processing, as /slots says)");
        assertThat(states.subList(ready, states.size())).allMatch(state -> state instanceof EngineState.Ready);
    }

    @Test
    void onALlamaServerWithNeitherMetricsNorSlotsOneLightCheckWaitsForTheSlotAndNoneIsSentBesideIt() {
        // Issue 24: no /metrics, no /slots, one slot held by a client for 55 s. Before: the light check timed out at
        // heavy-timeout (30 s), was given up (llama-server keeps its thread until the slot frees) and followed by
        // another at once: two threads held, and a failure. Now one waits, reported busy, and no other is sent beside
        // it; its answer once the slot frees passes.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), GENERATION_CHECKS_ONLY));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        slotHeld(clock.instant(), Duration.ofSeconds(55), sent);
        int ready = states.size();
        for (int second = 0; second < 50; second++) {
            advance(Duration.ofSeconds(1));
        }

        assertThat(sent).as("one light check outstanding at a time").hasSize(1);
        assertThat(states.subList(ready, states.size())).allMatch(EngineState::acceptsTraffic);
        ProbeReport last = history.last(ProbeKind.GENERATION);
        assertThat(last.outcome()).as(last.detail()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail()).contains("neither /metrics nor /slots");
        // The slot frees: the check waiting is answered and passes, and the next ones follow.
        advance(Duration.ofSeconds(10));
        assertThat(history.last(ProbeKind.GENERATION).outcome()).isEqualTo(ProbeReport.Outcome.PASSED);
        assertThat(sent.size()).isGreaterThan(1);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void onALlamaServerWithNeitherMetricsNorSlotsAHeavyProbeQueuedBehindAClientIsBusyNotAFailure() {
        // Issue 24: no /metrics, no /slots, and a client takes the only slot for 45 s just as a ready engine's heavy
        // probe is sent. Before: its heavy-timeout (30 s) was a timed_out failure of a healthy engine, nothing could
        // tell the queue from a hang. Now it is busy; a hang is still taken out by the light checks (next test).
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), GENERATION_CHECKS_ONLY));
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        AtomicReference<Instant> free = new AtomicReference<>();
        List<CompletionRequest> heavy = new CopyOnWriteArrayList<>();
        engine.completions = request -> {
            Instant now = clock.instant();
            if (request.maxTokens() == 16 && free.get() == null) {
                free.set(now.plus(Duration.ofSeconds(45)));
            }
            if (request.maxTokens() == 16) {
                heavy.add(request);
            }
            Instant until = free.get();
            return until == null ? ScriptedEngine.correct(request) : answeredOnceFree(request, until);
        };
        int ready = states.size();
        for (int second = 0; second < 100 && heavy.isEmpty(); second++) {
            advance(Duration.ofSeconds(1));
        }
        assertThat(heavy).as("a heavy probe is due within heavy-interval").hasSize(1);
        advance(Duration.ofSeconds(31));

        ProbeReport last = history.last(ProbeKind.REPRESENTATIVE);
        assertThat(last.outcome()).as(last.detail()).isEqualTo(ProbeReport.Outcome.BUSY);
        assertThat(last.detail()).contains("neither /metrics nor /slots");
        advance(Duration.ofSeconds(60));
        assertThat(states.subList(ready, states.size())).allMatch(EngineState::acceptsTraffic);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
    }

    @Test
    void aLlamaServerWithNeitherMetricsNorSlotsThatNeverAnswersIsOutAfterHeavyIntervalAndFailureThresholdTimeouts() {
        // The light check that waits is never given up for another; a hang still takes the engine out: busy up to
        // heavy-interval (60 s here), then each heavy-timeout (30 s) more it waits is a failure, three of them.
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.serverInfo = new ServerInfo("/props", 4096, "/props n_ctx", null, "b1", 1);
        engine.metricsSupported = false;
        start(probe(1, 100_000, Duration.ofMillis(20), Duration.ofMillis(200), GENERATION_CHECKS_ONLY));
        List<CompletionRequest> sent = new CopyOnWriteArrayList<>();
        slotHeld(clock.instant(), Duration.ofHours(1), sent);
        for (int second = 0; second < 140; second++) {
            advance(Duration.ofSeconds(1));
        }
        assertThat(machine.current().acceptsTraffic()).isTrue();
        advance(Duration.ofSeconds(15));

        assertThat(machine.current()).isInstanceOf(EngineState.NotReady.class);
        assertThat(machine.current().reason()).isEqualTo(Reason.GENERATION_TIMED_OUT);
        assertThat(history.last(ProbeKind.GENERATION).detail()).contains("waited past heavy-interval (60 s)");
        assertThat(sent.stream().filter(request -> request.maxTokens() == 2)).hasSize(1);
    }

    @Test
    void aServerWithoutSlotsIsNotAskedAgain() {
        engine.model = ScriptedEngine.ok(new ModelCard("m", "root", 4096, "llamacpp"));
        engine.metricsSupported = false;
        start(withLightChecks());
        advance(Duration.ofSeconds(10));
        assertThat(engine.slotsCalls.get()).isEqualTo(1);
    }

    @Test
    void aVllmEngineWithRequestsWaitingStillGetsItsLightChecks() {
        start(withLightChecks());
        assertThat(machine.current().acceptsTraffic()).isTrue();
        engine.metricsAnswer =
                ScriptedEngine.ok(new EngineMetricsSample(null, 4.0, 3.0, 100.0, 100.0, 0.0, java.util.Map.of()));
        advance(Duration.ofMillis(2100));
        int sent = engine.completionCalls.get();
        advance(Duration.ofSeconds(10));
        assertThat(engine.completionCalls.get() - sent).isGreaterThanOrEqualTo(4);
    }

    @Test
    void aLightCheckInFlightNeverHoldsUpHealth() {
        start(withLightChecks());
        engine.hangOn = time;
        advance(Duration.ofMillis(2100));
        engine.health = ScriptedEngine.failure(EngineFailure.Kind.REFUSED, "refused");
        Instant died = clock.instant();
        advance(Duration.ofMillis(200));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(Duration.between(died, machine.current().since())).isLessThanOrEqualTo(Duration.ofMillis(200));
    }

    @Test
    void aSaturatedEngineThatMakesProgressIsBusyNotBroken() {
        start(withLightChecks());
        // Every sequence taken, others queued, tokens flowing; the light check waits in the queue until it gives up.
        engine.running = 16;
        engine.waiting = 3;
        engine.progressPerScrape = 400;
        engine.hangOn = time;
        advance(Duration.ofMinutes(5));
        assertThat(states).noneMatch(state -> !state.acceptsTraffic() && states.indexOf(state) > 2);
        assertThat(machine.current()).isInstanceOf(EngineState.Ready.class);
        assertThat(history.last(ProbeKind.GENERATION).outcome()).isEqualTo(ProbeReport.Outcome.BUSY);
        // Its budget grew with the queue: 750 ms, once more per waiting request.
        assertThat(engine.lastTimeout).isEqualTo(Duration.ofMillis(3000));
    }

    @Test
    void requestsRunningWithNoProgressAreAStallSeenWithinFiveSeconds() {
        start(withLightChecks());
        advance(Duration.ofMillis(500));
        engine.running = 24;
        engine.hangOn = time;
        Instant stalled = clock.instant();
        advance(Duration.ofSeconds(5));
        assertThat(machine.current().kind()).isEqualTo(EngineState.Kind.NOT_READY);
        assertThat(machine.current().reason()).isEqualTo(Reason.GENERATION_STALLED);
        assertThat(Duration.between(stalled, machine.current().since())).isLessThanOrEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void weightsSwappedUnderTrafficAreACanaryMismatchWithinFiveSeconds() {
        start(withLightChecks());
        engine.running = 8;
        engine.successes = 10_000;
        engine.progressPerScrape = 500;
        advance(Duration.ofMillis(900));
        engine.completions = ProbeScheduleTests::wrongWeights;
        Instant swapped = clock.instant();
        advance(Duration.ofSeconds(5));
        assertThat(machine.current().reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(machine.current().acceptsTraffic()).isFalse();
        assertThat(Duration.between(swapped, machine.current().since())).isLessThanOrEqualTo(Duration.ofSeconds(5));
    }

    /** An engine serving other weights: the canary (the request with a seed) answers differently. */
    static Mono<EngineCall<StreamedCompletion>> wrongWeights(CompletionRequest request) {
        return request.seed() != null
                ? Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                        1,
                        " wrong",
                        List.of(999),
                        List.of(-2.0),
                        "length",
                        5,
                        1,
                        null,
                        Duration.ofMillis(1),
                        Duration.ZERO,
                        Duration.ZERO,
                        Duration.ofMillis(2))))
                : ScriptedEngine.correct(request);
    }
}
