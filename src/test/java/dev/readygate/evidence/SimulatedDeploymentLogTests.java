package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.restart.RestartAttribution;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.StartEvidence;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * The simulator's log in each deployment style (issue 18) read as readygate reads an engine log: the real tail, parser,
 * log window and attribution, against what the simulator says it did.
 */
class SimulatedDeploymentLogTests {

    @TempDir
    Path workDir;

    RunningSimulator running;

    EngineLogEvidence log;
    Disposable following;

    @AfterEach
    void stop() {
        if (following != null) {
            following.dispose();
        }
        if (running != null) {
            running.close();
        }
    }

    /** Follows the simulator's engine log from its start, as readygate does. */
    void follow() {
        LogTail tail = new LogTail(
                workDir.resolve("engine.log"),
                Duration.ofMillis(20),
                DataSize.ofKilobytes(64),
                Schedulers.boundedElastic());
        log = new EngineLogEvidence(
                tail, new VllmLogParser(Clock.systemUTC(), tail::modifiedAt), Clock.systemUTC(), Duration.ofSeconds(1));
        following = log.follow();
    }

    LogFindings findingsOnce(Predicate<LogFindings> done) {
        await().atMost(Duration.ofSeconds(10)).until(() -> done.test(log.current()));
        return log.current();
    }

    static RestartAttribution.Attribution attribute(LogFindings findings) {
        return RestartAttribution.attribute(new StartEvidence(findings, 0.0, EvidenceSources.Reading.none()));
    }

    @Test
    void composePrefixedPreloadHitIsAttributedAsAHit() {
        Instant begin = Instant.now().minusSeconds(1);
        running = RunningSimulator.serving(workDir, "deployment.log-prefix=compose");
        running.restartAndAwait(StartupPath.PRELOAD_HIT);
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null && f.mappedTensors() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(findings.vllmVersion()).isEqualTo("0.31.0");
        assertThat(findings.firstLineAt()).isBetween(begin, Instant.now());
        assertThat(findings.weightsHeldOutsideGib()).isEqualTo(1.12);
    }

    @Test
    void dockerDesktopPrefixedFallbackIsAttributedWithItsReason() {
        running = RunningSimulator.serving(workDir, "deployment.log-prefix=docker-desktop");
        running.restartAndAwait(StartupPath.PRELOAD_FALLBACK);
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null && f.cacheFallbackReason() != null);
        RestartAttribution.Attribution attribution = attribute(findings);
        assertThat(attribution.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(attribution.fallbackReason()).startsWith("Cannot connect to weight cache daemon at ");
    }

    @Test
    void isoBracketPrefixedColdStartInLegacyFormatsIsCold() {
        running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "deployment.log-prefix=iso-bracket", "deployment.formats=legacy");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.COLD);
        assertThat(findings.kvCacheSizeTokens()).isEqualTo(65_536L);
        assertThat(findings.modelLoadingGib()).isEqualTo(1.1214);
    }

    @Test
    void dataParallelStartCountsItsApiServersAndKeepsItsHeader() {
        running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "deployment.data-parallel-size=2", "deployment.log-prefix=cri");
        follow();

        // The second core's header comes after the first core's weights: it resets nothing of the start.
        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.COLD);
        assertThat(findings.header()).isTrue();
        assertThat(findings.apiServers()).isEqualTo(2);
        assertThat(findings.engineArgs()).contains("'data_parallel_size': 2");
    }

    @Test
    void tensorParallelColdStartIsColdAndItsWeightsTookAsLongAsTheSlowestRank() throws Exception {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.tensor-parallel-size=2");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.COLD);
        assertThat(findings.header()).isTrue();
        assertThat(findings.engineArgs()).contains("'tensor_parallel_size': 2");
        assertThat(findings.kvCacheSizeTokens()).isEqualTo(65_536L);
        // Every rank's `Loading weights took`: the start's is the longest over the ranks.
        double slowest = slowestLoadingWeights("(Worker_TP");
        assertThat(findings.loadingWeightsSeconds()).isEqualTo(slowest);
    }

    @Test
    void pipelineParallelColdStartIsColdAndItsWeightsTookAsLongAsTheSlowestStage() throws Exception {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.pipeline-parallel-size=2");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.COLD);
        assertThat(findings.engineArgs()).contains("'pipeline_parallel_size': 2");
        double slowest = slowestLoadingWeights("(Worker_PP");
        assertThat(findings.loadingWeightsSeconds()).isEqualTo(slowest);
        // Each stage is a process of its own name: never taken for another engine.
        assertThat(findings.otherEngine()).isNull();
    }

    @Test
    void rayPipelineParallelColdStartIsColdAndItsWeightsTookAsLongAsTheSlowestActor() throws Exception {
        running = RunningSimulator.serving(
                workDir,
                "preload.enabled=false",
                "deployment.pipeline-parallel-size=2",
                "deployment.distributed-executor-backend=ray");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(attribute(findings).path()).isEqualTo(RestartPath.COLD);
        assertThat(findings.engineArgs()).contains("'distributed_executor_backend': 'ray'");
        // Both actors are RayWorkerWrapper, each its own pid: ranks of one engine, never another engine.
        assertThat(findings.loadingWeightsSeconds()).isEqualTo(slowestLoadingWeights("(EngineCore pid=4243) (Ray"));
        assertThat(findings.otherEngine()).isNull();
    }

    /** The longest {@code Loading weights took} of the workers whose prefix starts with {@code worker}. */
    double slowestLoadingWeights(String worker) throws java.io.IOException {
        return java.nio.file.Files.readString(workDir.resolve("engine.log"))
                .lines()
                .filter(line -> line.startsWith(worker) && line.contains("Loading weights took "))
                .mapToDouble(
                        line -> Double.parseDouble(line.replaceAll(".*Loading weights took ([\\d.]+) seconds$", "$1")))
                .max()
                .orElseThrow();
    }

    @Test
    void speculativeDecodingUsesTheModelsLoadingNotTheDrafters() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.speculative-decoding=true");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(findings.drafterLoadingWeightsSeconds()).isNotNull();
        assertThat(findings.loadingWeightsSeconds()).isGreaterThan(findings.drafterLoadingWeightsSeconds());
        assertThat(attribute(findings).evidence())
                .anyMatch(line -> line.startsWith("log: the speculative-decoding drafter's Loading weights took "));
    }

    @Test
    void tensorizerColdStartIsColdWithoutALoadingWeightsLine() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "deployment.load-format=tensorizer");
        follow();

        LogFindings findings = findingsOnce(f -> f.engineInitSeconds() != null);
        assertThat(findings.loadingWeightsSeconds()).isNull();
        RestartAttribution.Attribution attribution = attribute(findings);
        assertThat(attribution.path()).isEqualTo(RestartPath.COLD);
        assertThat(attribution.evidence())
                .contains("log: no 'Loading weights took' line: load_format 'tensorizer' logs none");
    }

    @Test
    void startThatDiesBeforeServingGivesVllmsReason() {
        running = RunningSimulator.serving(
                workDir, "preload.enabled=false", "auto-restart=false", "deployment.log-prefix=compose");
        running.fault("startup-failure", false);
        running.restart(StartupPath.COLD);
        follow();

        LogFindings findings =
                findingsOnce(f -> f.startFailure() != null && f.startFailure().startsWith("torch."));
        assertThat(findings.startFailure())
                .isEqualTo(
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                                + "capacity of 139.81 GiB of which 1.06 GiB is free. Process 3112 has 122.40 GiB memory in use.");
    }

    @Test
    void engineThatCrashesGivesTheRootExceptionAsItsFatalError() {
        running = RunningSimulator.serving(workDir, "preload.enabled=false", "auto-restart=false");
        running.crash();
        follow();

        LogFindings findings = findingsOnce(f -> f.fatal() != null);
        assertThat(findings.fatal()).isEqualTo("RuntimeError: simulated crash");
    }
}
