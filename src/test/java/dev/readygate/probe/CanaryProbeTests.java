package dev.readygate.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineFailure;
import dev.readygate.engine.EngineMetricsSample;
import dev.readygate.engine.ModelCard;
import dev.readygate.engine.StreamedCompletion;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.statedir.StateDir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

class CanaryProbeTests {

    @TempDir
    Path stateDir;

    @TempDir
    Path snapshotDir;

    final Clock clock = Clock.fixed(Instant.parse("2026-11-30T12:00:00Z"), ZoneOffset.UTC);
    final ScriptedEngine engine = new ScriptedEngine();
    final ModelCard card = new ModelCard("Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B", 4096);
    final JsonMapper json = JsonMapper.builder().build();

    static ReadygateProperties.Canary canary(List<Integer> ids, @Nullable String text, @Nullable Double logprob) {
        return new ReadygateProperties.Canary(
                true, "The capital of France is", 1, 0, ids, text, logprob, 0.01, 0.1, true, true);
    }

    CanaryProbe probe(ReadygateProperties.Canary config, @Nullable Path snapshot, StartTrust.Trust trust) {
        return new CanaryProbe(
                config,
                "NVIDIA H200",
                engine,
                new EngineFactsHolder(new EngineStateMachine(new ReadinessRules(1, 3), clock.instant(), change -> {})),
                new SnapshotOracle(snapshot, json),
                new CanaryBaselineStore(new StateDir(stateDir, Clock.systemUTC()), json),
                () -> trust,
                clock,
                Schedulers.immediate());
    }

    void answers(int id, String text, double logprob) {
        engine.completions = request -> Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                1,
                text,
                List.of(id),
                List.of(logprob),
                "length",
                5,
                1,
                null,
                Duration.ofMillis(3),
                Duration.ZERO,
                Duration.ZERO,
                Duration.ofMillis(4))));
    }

    ProbeReport run(CanaryProbe probe) {
        return run(probe, null);
    }

    ProbeReport run(CanaryProbe probe, @Nullable EngineMetricsSample before) {
        return probe.run(card, "0.31.0", before, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
    }

    static EngineMetricsSample sample(double running, double generated) {
        return new EngineMetricsSample(1000.0, running, 0.0, generated, 0.0, 10.0, java.util.Map.of());
    }

    @Test
    void runSendsTheDeterministicRequest() {
        answers(12095, " Paris", -0.4243);
        List<dev.readygate.engine.CompletionRequest> sent = new java.util.ArrayList<>();
        engine.completions = request -> {
            sent.add(request);
            return Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                    1,
                    " Paris",
                    List.of(12095),
                    List.of(-0.42),
                    "length",
                    5,
                    1,
                    null,
                    Duration.ZERO,
                    Duration.ZERO,
                    Duration.ZERO,
                    Duration.ZERO)));
        };
        run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED));
        assertThat(sent.getFirst())
                .extracting("temperature", "seed", "logprobs", "returnTokenIds", "maxTokens", "minTokens")
                .containsExactly(0.0, 0L, 0, true, 1, 1);
        assertThat(sent.getFirst().promptText()).isEqualTo("The capital of France is");
    }

    @Test
    void configuredExpectationWins() {
        answers(12095, " Paris", -0.4243);
        ProbeReport report = run(probe(canary(List.of(12095), " Paris", -0.42), null, StartTrust.Trust.UNTRUSTED));
        assertThat(report.passed()).isTrue();
        assertThat(report.canary().source()).isEqualTo(CanaryExpectation.Source.CONFIGURATION);
    }

    @Test
    void reportCarriesWhatTheCanaryCostWhateverItsVerdict() {
        answers(3920, " ralo", -1.9612);
        ProbeReport passed = run(probe(canary(List.of(3920), " ralo", -1.9612), null, StartTrust.Trust.TRUSTED));
        ProbeReport mismatch = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        for (ProbeReport report : List.of(passed, mismatch)) {
            assertThat(report.measurement().promptTokens()).isEqualTo(5);
            assertThat(report.measurement().completionTokens()).isEqualTo(1);
            assertThat(report.measurement().total()).isEqualTo(Duration.ofMillis(4));
        }
    }

    @Test
    void differentAnswerIsALatchedCanaryMismatchShowingBoth() {
        answers(3920, " ralo", -1.9612);
        ProbeReport report = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        assertThat(report.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(report.latched()).isTrue();
        assertThat(report.detail())
                .isEqualTo("expected [12095] \" Paris\" (-0.4243) (configuration), got [3920] \" ralo\" (-1.9612)");
    }

    /**
     * vLLM's sleep (and pause) abort the requests in flight by default: a canary cut short ends with finish_reason
     * abort and no token, or another one. That is no verdict on the weights: a failure of its own, never latched.
     */
    @Test
    void aCanaryTheEngineAbortedIsNoMismatch() {
        engine.completions = request -> Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                0,
                "",
                List.of(),
                List.of(),
                "abort",
                5,
                0,
                null,
                Duration.ofMillis(3),
                Duration.ZERO,
                Duration.ZERO,
                Duration.ofMillis(4))));
        ProbeReport report = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        assertThat(report.reason()).isEqualTo(Reason.ENGINE_ABORTED);
        assertThat(report.latched()).isFalse();
        assertThat(report.detail()).startsWith("the engine aborted the canary (finish_reason abort");
    }

    @Test
    void logprobWithinTheToleranceMatches() {
        answers(12095, " Paris", -0.4291);
        assertThat(run(probe(canary(List.of(12095), null, -0.4243), null, StartTrust.Trust.TRUSTED))
                        .passed())
                .isTrue();
        answers(12095, " Paris", -0.4843);
        assertThat(run(probe(canary(List.of(12095), null, -0.4243), null, StartTrust.Trust.TRUSTED))
                        .reason())
                .isEqualTo(Reason.CANARY_MISMATCH);
    }

    @Test
    void snapshotManifestOracleIsTheExpectationWhenNoneIsConfigured() throws Exception {
        Files.writeString(snapshotDir.resolve("manifest.json"), """
                {"schema_version":1,"oracle_token_ids":[12095],"oracle_text":" Paris",
                 "oracle_sampled_token_logprob":-0.4242669641971588}""");
        answers(12095, " Paris", -0.4242669641971588);
        ProbeReport report = run(probe(canary(List.of(), null, null), snapshotDir, StartTrust.Trust.UNTRUSTED));
        assertThat(report.passed()).isTrue();
        assertThat(report.canary().source()).isEqualTo(CanaryExpectation.Source.SNAPSHOT_MANIFEST);
        answers(999, " Lyon", -3.0);
        assertThat(run(probe(canary(List.of(), null, null), snapshotDir, StartTrust.Trust.UNTRUSTED))
                        .reason())
                .isEqualTo(Reason.CANARY_MISMATCH);
    }

    @Test
    void snapshotManifestTakenElsewhereNeitherVouchesNorTeachesAndTheReportSaysWhy() throws Exception {
        // The manifest's oracle was sampled on another GPU: its logprob is not this GPU's.
        Files.writeString(snapshotDir.resolve("manifest.json"), """
                {"schema_version":1,"oracle_token_ids":[12095],"oracle_text":" Paris",
                 "oracle_sampled_token_logprob":-0.4242669641971588}""");
        answers(12095, " Paris", -0.4242669641971588);
        String why = "gpu_uuid: the snapshot was taken on GPU-a, this engine runs on GPU-b";
        List<String> askedFor = new java.util.ArrayList<>();
        CanaryProbe probe = new CanaryProbe(
                canary(List.of(), null, null),
                "NVIDIA H200",
                engine,
                new EngineFactsHolder(new EngineStateMachine(new ReadinessRules(1, 3), clock.instant(), change -> {})),
                new SnapshotOracle(snapshotDir, json, vllmVersion -> {
                    askedFor.add(vllmVersion);
                    return why;
                }),
                new CanaryBaselineStore(new StateDir(stateDir, Clock.systemUTC()), json),
                () -> StartTrust.Trust.UNTRUSTED,
                clock,
                Schedulers.immediate());

        ProbeReport report = run(probe);

        // Not vouched for by the manifest, and a restored start learns nothing: the canary only sees it answers.
        assertThat(report.passed()).isTrue();
        assertThat(report.canary().source()).isEqualTo(CanaryExpectation.Source.NONE);
        assertThat(report.detail())
                .isEqualTo("no expected answer and this start is not trusted to learn one: the canary checks only that"
                        + " the engine answers; the snapshot manifest's oracle was not used (" + why + ")");
        assertThat(askedFor).containsExactly("0.31.0");
        assertThat(new CanaryBaselineStore(new StateDir(stateDir, Clock.systemUTC()), json)
                        .find(new BaselineKey(
                                "Qwen/Qwen3-0.6B",
                                "Qwen/Qwen3-0.6B",
                                4096,
                                "0.31.0",
                                "NVIDIA H200",
                                "prompt#%08x/max1/seed0".formatted("The capital of France is".hashCode()))))
                .isNull();
    }

    @Test
    void trustedStartLearnsABaselineThatLaterStartsAreHeldTo() {
        answers(12095, " Paris", -0.4243);
        ProbeReport learned = run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED));
        assertThat(learned.passed()).isTrue();
        assertThat(learned.detail()).contains("learned");
        assertThat(stateDir.resolve("canary-baselines.json")).exists();
        // A later start (a new store reads the file, as after a readygate restart) with other weights.
        answers(777, " Rome", -2.5);
        ProbeReport later = run(probe(canary(List.of(), null, null), null, StartTrust.Trust.UNTRUSTED));
        assertThat(later.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(later.canary().source()).isEqualTo(CanaryExpectation.Source.LEARNED_BASELINE);
    }

    @Test
    void untrustedStartNeverLearns() {
        answers(777, " Rome", -2.5);
        ProbeReport report = run(probe(canary(List.of(), null, null), null, StartTrust.Trust.UNTRUSTED));
        assertThat(report.passed()).isTrue();
        assertThat(report.detail()).contains("not trusted");
        assertThat(stateDir.resolve("canary-baselines.json")).doesNotExist();
    }

    @Test
    void baselineIsKeyedByVersionSoAnUpgradeLearnsAgain() {
        answers(12095, " Paris", -0.4243);
        run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED));
        answers(12096, " paris", -0.5);
        ProbeReport upgraded = probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED)
                .run(card, "0.32.0", null, Duration.ofSeconds(5))
                .block();
        assertThat(upgraded.passed()).isTrue();
        assertThat(upgraded.detail()).contains("learned");
    }

    @Test
    void anotherModelAtTheSamePathWithAnotherIdentityLearnsItsOwnBaseline() {
        // llama-server names a model by its path: a model copied over it keeps the name, and /v1/models meta tells it.
        ModelCard small = new ModelCard("/models/model.gguf", null, 2048, "llamacpp", "n_vocab=32000,n_params=8421376");
        ModelCard larger = new ModelCard("/models/model.gguf", null, 2048, "llamacpp", "n_vocab=32000,n_params=9999");
        answers(12095, " Paris", -0.4243);
        assertThat(runOn(small).detail()).contains("learned");
        answers(777, " Rome", -2.5);

        ProbeReport swapped = runOn(larger);

        assertThat(swapped.passed()).isTrue();
        assertThat(swapped.detail()).contains("learned");
        // Back to the first model: held to its own baseline again.
        answers(12095, " Paris", -0.4243);
        assertThat(runOn(small).canary().source()).isEqualTo(CanaryExpectation.Source.LEARNED_BASELINE);
    }

    @Test
    void otherWeightsWithTheSameIdentityAreACanaryMismatch() {
        ModelCard model = new ModelCard("/models/model.gguf", null, 2048, "llamacpp", "n_vocab=32000,n_params=8421376");
        answers(12095, " Paris", -0.4243);
        runOn(model);
        answers(777, " Rome", -2.5);

        ProbeReport report = runOn(model);

        assertThat(report.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(report.latched()).isTrue();
    }

    @Test
    void anAcceptedModelTeachesItsAnswerEvenOnAnUntrustedStart() throws Exception {
        answers(12095, " Paris", -0.4243);
        run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED));
        answers(777, " Rome", -2.5);
        ModelAcceptance.Request request =
                new ModelAcceptance(stateDir, json).request("alice", "fine-tune", clock.instant());

        CanaryProbe untrusted = probe(canary(List.of(), null, null), null, StartTrust.Trust.UNTRUSTED);
        ProbeReport accepted = run(untrusted);

        assertThat(accepted.passed()).isTrue();
        assertThat(accepted.detail())
                .startsWith("the operator accepted this model (alice, request " + request.id() + ")")
                .contains("in place of [12095]");
        assertThat(run(untrusted).canary().expected().tokenIds()).containsExactly(777);
    }

    @Test
    void anAcceptanceNeverReplacesAConfiguredExpectationAndTheAuditSaysWhy() throws Exception {
        answers(777, " Rome", -2.5);
        ModelAcceptance.Request request =
                new ModelAcceptance(stateDir, json).request("alice", "fine-tune", clock.instant());

        ProbeReport report = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));

        assertThat(report.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(new ModelAcceptance(stateDir, json)
                        .outcome(request.id())
                        .path("outcome")
                        .asString())
                .isEqualTo("refused");
        assertThat(stateDir.resolve(ModelAcceptance.REQUEST)).doesNotExist();
    }

    private ProbeReport runOn(ModelCard served) {
        return probe(canary(List.of(), null, null), null, StartTrust.Trust.UNKNOWN)
                .run(served, "b1-llama", null, Duration.ofSeconds(5))
                .block(Duration.ofSeconds(5));
    }

    @Test
    void errorEventFailsTheCanary() {
        engine.completions = request -> Mono.just(ScriptedEngine.ok(new StreamedCompletion(
                0,
                "",
                List.of(),
                List.of(),
                null,
                5,
                0,
                "EngineCore encountered an issue",
                Duration.ZERO,
                Duration.ZERO,
                Duration.ZERO,
                Duration.ZERO)));
        assertThat(run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED))
                        .reason())
                .isEqualTo(Reason.ERROR_EVENT);
    }

    @Test
    void runWhenTheEngineAnswers500IsAFailedReportNotAnError() {
        engine.completions = request -> Mono.just(ScriptedEngine.status(500));
        ProbeReport report = run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED));
        assertThat(report.outcome()).isEqualTo(ProbeReport.Outcome.FAILED);
        assertThat(report.reason()).isEqualTo(Reason.HTTP_STATUS);
        assertThat(stateDir.resolve("canary-baselines.json")).doesNotExist();
    }

    @Test
    void underLoadTheFirstTokenAndItsLogprobWithinTheLooserToleranceAreCompared() {
        ReadygateProperties.Canary expected = canary(List.of(12095), " Paris", -0.4243);
        // Batched with other requests: the logprob moved by 0.036, more than the idle tolerance (0.01).
        answers(12095, " Paris", -0.46);
        ProbeReport loaded = run(probe(expected, null, StartTrust.Trust.TRUSTED), sample(3, 500));
        assertThat(loaded.passed()).as(loaded.detail()).isTrue();
        assertThat(loaded.detail()).contains("under load");
        // The same answer from an engine that was alone with the canary, before and after: a mismatch.
        engine.running = 0;
        engine.generated = 500;
        ProbeReport alone = run(probe(expected, null, StartTrust.Trust.TRUSTED), sample(0, 500));
        assertThat(alone.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(alone.latched()).isTrue();
    }

    @Test
    void otherRequestsSeenOnlyAfterTheCanaryAlsoMakeItAnAnswerUnderLoad() {
        answers(12095, " Paris", -0.46);
        engine.running = 2;
        engine.generated = 900;
        ProbeReport report =
                run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED), sample(0, 500));
        assertThat(report.passed()).isTrue();
    }

    /**
     * No fresh sample before the canary (the last scrape timed out: a loaded node) says nothing of the batch: the
     * scrape after it does. The fault matrix at the defaults latched {@code canary_mismatch} on a correct engine under
     * load this way (docs/readiness.md, "The fault matrix").
     */
    @Test
    void withNoSampleBeforeTheCanaryOtherRequestsSeenAfterItMakeItAnAnswerUnderLoad() {
        answers(12095, " Paris", -0.46);
        engine.running = 3;
        ProbeReport report = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        assertThat(report.passed()).as(report.detail()).isTrue();
        assertThat(report.detail()).contains("under load");
    }

    /**
     * An engine that serves {@code /metrics} but did not answer it around the canary: whether the canary was alone is
     * unknown, so only what batching keeps is compared (a correct engine is never latched out on a guess), and another
     * first token is still a mismatch.
     */
    @Test
    void whenTheEngineCannotSayItsLoadOnlyWhatBatchingKeepsIsCompared() {
        engine.metricsAnswer =
                ScriptedEngine.failure(EngineFailure.Kind.TIMED_OUT, "GET /metrics: no complete answer within 800 ms");
        answers(12095, " Paris", -0.46);
        ProbeReport batched = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        assertThat(batched.passed()).as(batched.detail()).isTrue();
        answers(5112, " tefu", -0.4243);
        ProbeReport other = run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED));
        assertThat(other.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(other.latched()).isTrue();
    }

    @Test
    void underLoadAnotherFirstTokenIsStillAMismatch() {
        answers(5112, " tefu", -0.4243);
        ProbeReport report =
                run(probe(canary(List.of(12095), " Paris", -0.4243), null, StartTrust.Trust.TRUSTED), sample(5, 100));
        assertThat(report.reason()).isEqualTo(Reason.CANARY_MISMATCH);
        assertThat(report.detail()).contains("under load");
    }

    @Test
    void aBaselineIsNeverLearnedFromAnAnswerGivenUnderLoad() {
        answers(12095, " Paris", -0.46);
        ProbeReport report = run(probe(canary(List.of(), null, null), null, StartTrust.Trust.TRUSTED), sample(4, 100));
        assertThat(report.passed()).isTrue();
        assertThat(report.detail()).contains("learned from an answer given alone");
        assertThat(stateDir.resolve("canary-baselines.json")).doesNotExist();
    }
}
