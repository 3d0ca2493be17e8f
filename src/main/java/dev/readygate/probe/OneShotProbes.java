package dev.readygate.probe;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineCall;
import dev.readygate.engine.EngineClient;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.EngineSurface;
import dev.readygate.engine.ModelCard;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.statedir.StateDir;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every probe readygate runs, once, outside the probe loop (for {@code readygate check}): discovery, one
 * {@code /metrics} scrape, the representative probe and the canary twice, each built exactly as the sidecar builds it.
 * Writes nothing: the canary compares with an expected answer (configured, a snapshot oracle, a baseline readygate
 * learned before) but never learns one. Blocking: a command line's thread only.
 */
public final class OneShotProbes {

    private final ReadygateProperties properties;
    private final EngineClient client;
    private final ManifestTrust manifestTrust;
    private final Clock clock;

    /**
     * What the probes found.
     *
     * @param surface what the engine offers
     * @param card the model card, with the context length discovery found
     * @param sample the {@code /metrics} scrape, or null
     * @param capabilities what readygate can use of it, after the probes (with how the prompt count was proven)
     * @param plannedPromptTokens the representative prompt's planned tokens, or null when they cannot be resolved
     * @param representative the representative probe's report, or null when it is disabled
     * @param firstCanary the canary's first report, or null when it is disabled
     * @param secondCanary its second report, or null
     * @param canaryStable whether both canary runs gave the same answer (null without two answers)
     * @param canaryExpected the canary's expected answer and its source, or why there is none
     */
    public record Result(
            EngineSurface surface,
            ModelCard card,
            @Nullable EngineMetricsSample sample,
            EngineCapabilities capabilities,
            @Nullable Integer plannedPromptTokens,
            @Nullable ProbeReport representative,
            @Nullable ProbeReport firstCanary,
            @Nullable ProbeReport secondCanary,
            @Nullable Boolean canaryStable,
            String canaryExpected) {}

    /**
     * @param manifestTrust whether the snapshot manifest may give the canary its expected answer (as the sidecar asks
     *     before it uses the manifest's oracle)
     */
    public OneShotProbes(
            ReadygateProperties properties, EngineClient client, ManifestTrust manifestTrust, Clock clock) {
        this.properties = properties;
        this.client = client;
        this.manifestTrust = manifestTrust;
        this.clock = clock;
    }

    /** Runs every probe once against the engine serving {@code listed}. */
    public Result run(ModelCard listed) {
        // A state machine of its own, told what the check saw, so the probes learn into one engine start's facts.
        EngineStateMachine machine = new EngineStateMachine(new ReadinessRules(1, 1), clock.instant(), change -> {});
        machine.apply(new Observation.HealthOk(clock.instant()));
        machine.apply(new Observation.ModelListed(clock.instant(), listed.id()));
        EngineFactsHolder facts = new EngineFactsHolder(machine);
        EngineSurface surface = Objects.requireNonNull(ProbeConfiguration.discovery(properties, client)
                .discover(listed)
                .block(Duration.ofMinutes(1)));
        ModelCard card = surface.applyTo(listed);
        facts.learn(f -> f.withCard(card).withCapabilities(f.capabilities().withSurface(surface)));
        EngineCall<EngineMetricsSample> scrape = client.metrics().block();
        EngineMetricsSample sample = scrape instanceof EngineCall.Success<EngineMetricsSample> ok ? ok.value() : null;
        Duration heavy = properties.probe().heavyTimeout();

        RepresentativeProbe representative = ProbeConfiguration.representativeProbe(properties, client, facts, clock);
        ProbeReport rep =
                representative == null ? null : representative.run(card, sample).block(heavy.multipliedBy(2));

        String version = Objects.requireNonNullElse(surface.version(), "unknown");
        ProbeReport first;
        ProbeReport second;
        // The baselines readygate learned (read only: an untrusted start never teaches one; the check writes nothing,
        // not even the state directory's lock file).
        try (StateDir state = StateDir.readingOnly(properties.stateDir(), clock)) {
            CanaryProbe canary = ProbeConfiguration.canaryProbe(
                    properties,
                    client,
                    facts,
                    new CanaryBaselineStore(state, JsonMapper.builder().build(), false),
                    () -> StartTrust.Trust.UNTRUSTED,
                    manifestTrust,
                    clock);
            first = canary == null
                    ? null
                    : canary.run(card, version, sample, heavy).block(heavy.plusSeconds(5));
            second = canary == null
                    ? null
                    : canary.run(card, version, sample, heavy).block(heavy.plusSeconds(5));
        }
        CanaryComparison a = first == null ? null : first.canary();
        CanaryComparison b = second == null ? null : second.canary();
        Boolean stable = a == null || b == null
                ? null
                : new CanaryExpectation(
                                CanaryExpectation.Source.NONE,
                                a.actual(),
                                properties.probe().canary().logprobTolerance(),
                                properties.probe().canary().logprobToleranceUnderLoad())
                        .matches(b.actual());
        String expected = a == null || a.expected() == null
                ? "none yet (not configured, no snapshot oracle, no baseline learned for this engine): readygate"
                        + " learns one on the first trusted start"
                : a.expected().describe() + " (" + a.source().value() + ")";
        return new Result(
                surface,
                card,
                sample,
                facts.current().capabilities(),
                properties.probe().representative().promptTokens().resolve(card.maxModelLen()),
                rep,
                first,
                second,
                stable,
                expected);
    }
}
