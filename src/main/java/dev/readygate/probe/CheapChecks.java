package dev.readygate.probe;

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
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The cheap check of one cycle of the probe loop ({@link ProbeSchedule}): {@code /health}, and in a full check then
 * {@code /metrics}, llama-server's {@code /slots}, {@code /v1/models}, the operator's model acceptance, discovery and
 * {@code /version}, one after the other. Each step applies its observation to the state machine before the next starts
 * (a step reads the state and the facts its predecessors left) and learns what it saw into the start's facts. What it
 * sends follows the facts (an endpoint the engine does not offer is not asked again on its start); when the loop runs a
 * full check rather than {@code /health} alone is {@link DueNow#cheapCheck}'s to say. About 400 lines: seven steps, each
 * turning one endpoint's answers into observations and facts of its own; split further, they would only hand the same
 * client, state machine and facts around.
 */
final class CheapChecks {

    // The probe loop's logger: these lines read as they did before the loop's steps moved here.
    private static final Logger logger = LoggerFactory.getLogger(ProbeSchedule.class);

    /** Cheap-check cycles between two reads of {@code /version} on the same engine. */
    private static final int VERSION_RECHECK_CYCLES = 30;

    private static final String WARMING_UP =
            " before this start's first 200: SGLang's warmup (its /health is 503 until its warmup request passed)";

    private final EngineClient client;
    private final EngineStateMachine machine;
    private final Verifier verifier;
    private final EngineFactsHolder facts;
    private final EngineDiscovery discovery;
    private final Clock clock;
    // A part of /metrics that comes and goes (a body just over max-body-size) is said once a minute, with a count.
    private final RateLimitedLog evidenceLost;
    /** The dialect the last discovery found, kept across starts; written and read on the probe loop. */
    private volatile @Nullable EngineDialect lastDialect;

    CheapChecks(
            EngineClient client,
            EngineStateMachine machine,
            Verifier verifier,
            EngineFactsHolder facts,
            EngineDiscovery discovery,
            Clock clock) {
        this.client = client;
        this.machine = machine;
        this.verifier = verifier;
        this.facts = facts;
        this.discovery = discovery;
        this.clock = clock;
        this.evidenceLost = new RateLimitedLog(logger, clock, Duration.ofMinutes(1));
    }

    /**
     * The full check: {@code /health}, and once it answers, the other steps and then {@code next} (what the cycle starts,
     * read after them); a failed {@code /health} is the cycle's only observation.
     */
    Flux<Observation> full(Mono<Observation> next) {
        return client.health().flatMapMany(call -> switch (call) {
            case EngineCall.Success<Void> ok ->
                Flux.concat(
                        Mono.fromSupplier(() -> applied(new Observation.HealthOk(clock.instant()))),
                        Flux.defer(this::scrapeAndListModel),
                        Mono.defer(this::accepted),
                        Mono.defer(this::discover),
                        Mono.defer(this::readVersion),
                        next);
            case EngineCall.Failure<Void> failure -> apply(healthFailed(failure.failure()));
        });
    }

    /**
     * {@code /metrics} and, where {@link #listModel} will list it, {@code /v1/models}, asked at once (one round trip
     * fewer on a start's way to ready); their answers are still judged one after the other, the scrape's first, then
     * {@code /slots}, then the model's, each against the state the one before left. A model list the scrape made
     * unwanted (it saw a restart) is dropped; one it made wanted is asked then.
     */
    private Flux<Observation> scrapeAndListModel() {
        Mono<Optional<EngineCall<ModelCard>>> models =
                listingWanted() ? client.model().map(Optional::of) : Mono.just(Optional.empty());
        return Mono.zip(Mono.defer(this::scrape).map(Optional::of).defaultIfEmpty(Optional.empty()), models)
                .flatMapMany(answers -> Flux.concat(
                        Mono.justOrEmpty(answers.getT1()),
                        Mono.defer(this::readSlots),
                        Mono.defer(() -> listModel(answers.getT2().orElse(null)))));
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
     * Between two full cheap checks of a ready engine, {@code /health} alone: its outcome counts exactly as in a full
     * check, so a refused connection or a 503 takes the engine out within {@code health-interval}.
     */
    Flux<Observation> healthOnly() {
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
            case HTTP_STATUS -> {
                if (!Objects.equals(failure.httpStatus(), 503)) {
                    yield new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
                }
                yield warmingUp(machine.current(), knownDialect())
                        ? new Observation.Loading(now, detail + WARMING_UP)
                        : new Observation.EngineDead(now, detail);
            }
            case RESET -> new Observation.CheckFailed(now, Reason.CONNECTION_RESET, detail);
            // TLS failed, the host did not resolve, another I/O error: not an answer of /health's.
            case IO_ERROR -> new Observation.CheckFailed(now, Reason.IO_ERROR, detail);
            default -> new Observation.CheckFailed(now, Reason.HEALTH_FAILED, detail);
        };
    }

    /**
     * Whether a 503 from {@code /health} is a start warming up rather than a dead engine: SGLang answers 503 (an empty
     * body, as for a dead engine) while its {@code server_status} is {@code Starting}, until its own warmup request
     * passed (sglang {@code http_server.py}, {@code health_generate}, 2026 builds), so on a start whose {@code /health}
     * never answered 200 (nothing seen yet, nothing listened, or still loading) from an engine that is SGLang or not
     * known yet (the dialect is discovered once {@code /health} passes). vLLM's API server listens only once its engine
     * is up, so its 503 is always a dead engine: a known vLLM, llama.cpp or TGI engine's 503 stays {@code engine_dead}.
     */
    static boolean warmingUp(EngineState state, @Nullable EngineDialect dialect) {
        boolean neverHealthy = switch (state) {
            case EngineState.Starting s -> true;
            case EngineState.Down d -> d.cause() == Reason.ENGINE_DOWN;
            case EngineState.Listening l -> true;
            default -> false;
        };
        return neverHealthy && (dialect == null || dialect == EngineDialect.SGLANG);
    }

    /**
     * The engine's dialect: the configured one, else the one discovered on this start or, before that, on the last
     * start that got that far (a restart is the same container's engine); null while none is known.
     */
    private @Nullable EngineDialect knownDialect() {
        EngineSurface surface = facts.current().capabilities().surface();
        return discovery.configured().orElse(surface != null ? surface.dialect() : lastDialect);
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
                Observation sleep = sleepState(sample, at);
                return sleep == null ? Mono.empty() : Mono.just(applied(sleep));
            }
            Observation restart = applied(new Observation.Restarted(clock.instant(), restarted, sample.processStart()));
            // The sample is the new process's: the start the restart began learns it.
            learnEvidence(f -> f.scraped(sample, at));
            return Mono.just(restart);
        });
    }

    /**
     * What vLLM's {@code vllm:engine_sleep_state} says of sleep: asleep at a level, or awake again after sleeping (every
     * part of it: a partial wake still reports its level); null when the series is absent or the engine never slept.
     */
    private @Nullable Observation sleepState(EngineMetricsSample sample, Instant at) {
        Integer level = sample.sleepLevel();
        if (level == null) {
            return null;
        }
        if (level > 0) {
            return new Observation.Asleep(at, level, sleepDetail(level));
        }
        return machine.current() instanceof EngineState.Sleeping
                ? new Observation.Awake(at, "vllm:engine_sleep_state: awake")
                : null;
    }

    /** What a sleep level means, in vLLM's words ({@code sleep_state}). */
    static String sleepDetail(int level) {
        return "vllm:engine_sleep_state: " + (level == 1 ? "weights_offloaded" : "discard_all") + " (sleep "
                + EngineState.Sleeping.levelWords(level == 1 ? 1 : 2) + ")";
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
     * holds (see {@link DueNow#waitsHoldingAThread}); not asked again on a start whose server does not offer it. Only an answer
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
    private void learnEvidence(UnaryOperator<EngineFacts> scrape) {
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

    /** Whether {@link #listModel} lists {@code /v1/models} now: until the model is known, and while it serves. */
    private boolean listingWanted() {
        EngineState state = machine.current();
        return facts.current().card() == null || state instanceof EngineState.Healthy || state.acceptsTraffic();
    }

    /**
     * Lists {@code /v1/models} until the model is known, and again at every full cheap check of an engine that serves
     * ({@code ready-interval}): a served model that is no longer listed, or another one in its place, is a failing
     * {@link Check#MODEL} check, cleared when it is listed again. {@code asked} is the answer when it was asked beside
     * the scrape (null: ask now).
     */
    private Mono<Observation> listModel(@Nullable EngineCall<ModelCard> asked) {
        EngineState state = machine.current();
        ModelCard known = facts.current().card();
        boolean serving = state.acceptsTraffic();
        if (!listingWanted()) {
            return Mono.empty();
        }
        return (asked != null ? Mono.just(asked) : client.model()).mapNotNull(call -> switch (call) {
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
            lastDialect = surface.dialect();
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
}
