package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import dev.readygate.restart.EnginePhase;
import dev.readygate.restart.RestartAttribution;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.StartEvidence;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.util.unit.DataSize;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * The fixture corpus ({@code src/test/resources/vllm-logs}, one file per vLLM version and deployment style, each
 * saying in its header what it models and from which source), each file through the real parser, the real log window
 * ({@link EngineLogEvidence}) and the real attribution: the path, the evidence and the figures.
 */
class VllmLogCorpusTests {

    /** A day after vLLM 0.31's release: the corpus's 0.31 logs were written the day before. */
    static final Instant READ_AT = Instant.parse("2026-10-06T18:00:00Z");

    @TempDir
    Path dir;

    /** One file read as readygate reads an engine log, and its start attributed. */
    record Replay(LogFindings log, RestartAttribution.Attribution attribution) {

        RestartPath path() {
            return attribution.path();
        }

        List<String> evidence() {
            return attribution.evidence();
        }
    }

    static List<String> lines(String file) {
        return lines("vllm-logs", file);
    }

    /** A fixture's lines, after its header comment: {@code corpus} is its folder under the test resources. */
    static List<String> lines(String corpus, String file) {
        try (InputStream in =
                Objects.requireNonNull(VllmLogCorpusTests.class.getResourceAsStream("/" + corpus + "/" + file), file)) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            // The header comment is the file's description, not log.
            return text.lines().dropWhile(line -> line.startsWith("#")).toList();
        } catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    Replay replay(String file, Clock clock, VllmLogParser parser) {
        return replay(dir, lines(file), clock, parser);
    }

    /** {@code lines} read as readygate reads an engine log ({@code dir} for its unused tail), its start attributed. */
    static Replay replay(Path dir, List<String> lines, Clock clock, VllmLogParser parser) {
        EngineLogEvidence log = new EngineLogEvidence(
                new LogTail(
                        dir.resolve("unused.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                parser,
                clock,
                Duration.ofSeconds(1));
        lines.forEach(log::line);
        LogFindings findings = log.current();
        // No traffic before the first scrape: the counters of a fresh engine are at zero.
        StartEvidence evidence = new StartEvidence(findings, 0.0, EvidenceSources.Reading.none());
        return new Replay(findings, RestartAttribution.attribute(evidence));
    }

    /** The corpus's files are written in UTC, and say so (their zone configured). */
    Replay replay(String file) {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        return replay(file, clock, new VllmLogParser(clock, () -> null, ZoneOffset.UTC));
    }

    @Test
    void v031ColdStartIsColdWithEveryFigure() {
        Replay replay = replay("v0.31-cold.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().vllmVersion()).isEqualTo("0.31.0");
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T14:02:11Z"));
        assertThat(replay.log().engineArgs()).contains("'revision': 'b968826d9c46dd6066d109eabc6255188de91218'");
        // The request that echoes "Loading weights took 1.00 seconds" in its prompt changes nothing.
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(4.71);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isNull();
        assertThat(replay.log().modelLoadingGib()).isEqualTo(15.27);
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(5.444196);
        assertThat(replay.log().availableKvCacheGib()).isEqualTo(104.30);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(759_424L);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(44.67);
        assertThat(replay.log().startFailure()).isNull();
        assertThat(replay.log().fatal()).isNull();
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Loading weights took 4.71 seconds (read from disk)", "metrics: counters started at zero");
    }

    @Test
    void coldStartThatDownloadsAndCompilesKeepsEachAsAPhaseOfItsOwn() {
        Replay replay = replay("v0.31-cold-download-compile.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        // Issue 28 item 5: the download is a phase of its own, not folded into model loading.
        assertThat(replay.log().downloadSeconds()).isEqualTo(69.521837);
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(81.571203);
        // Issue 28 item 4: init engine's compilation suffix, the compile, and graph capture are kept.
        assertThat(replay.log().engineInitSeconds()).isEqualTo(114.09);
        assertThat(replay.log().compilationSeconds()).isEqualTo(44.34);
        assertThat(replay.log().compileSeconds()).isEqualTo(35.61);
        assertThat(replay.log().compileCacheLoadSeconds()).isNull();
        assertThat(replay.log().compileCacheHit()).isFalse();
        assertThat(replay.log().graphCaptureSeconds()).isEqualTo(12.0);
        assertThat(replay.log().graphCaptureGib()).isEqualTo(0.62);
        assertThat(replay.log().loggedDurations())
                .containsEntry("download", 69.521837)
                .containsEntry("model_loading", 81.571203 - 69.521837)
                .containsEntry("weights_loading", 10.84)
                .containsEntry("engine_init", 114.09)
                .containsEntry("compilation", 44.34)
                .containsEntry("compile", 35.61)
                .containsEntry("graph_capture", 12.0)
                .containsEntry("graph_capture_gib", 0.62)
                .doesNotContainKey("compile_cache_load");
        // The meters and the comparison read the same keys.
        assertThat(EnginePhase.of(replay.log().loggedDurations()).keySet())
                .containsExactly(
                        EnginePhase.DOWNLOAD,
                        EnginePhase.WEIGHTS_LOADING,
                        EnginePhase.MODEL_LOADING,
                        EnginePhase.COMPILE,
                        EnginePhase.COMPILATION,
                        EnginePhase.GRAPH_CAPTURE,
                        EnginePhase.ENGINE_INIT);
        assertThat(EnginePhase.compileCacheHit(replay.log().loggedDurations())).isFalse();
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Loading weights took 10.84 seconds (read from disk)",
                        "metrics: counters started at zero",
                        "log: weights downloaded in 69.52 s: a restart that downloads is not a slow cold start",
                        "log: graphs compiled in 35.61 s (compile cache miss: nothing cached for this model,"
                                + " configuration or vLLM version)");
    }

    @Test
    void restartThatLoadsCompiledGraphsFromTheCacheIsACompileCacheHitWithoutADownload() {
        Replay replay = replay("v0.31-compile-cache-hit.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().downloadSeconds()).isNull();
        assertThat(replay.log().compileCacheLoadSeconds()).isEqualTo(2.087);
        assertThat(replay.log().compileSeconds()).isNull();
        assertThat(replay.log().compileCacheHit()).isTrue();
        assertThat(replay.log().compilationSeconds()).isEqualTo(8.41);
        assertThat(replay.log().graphCaptureSeconds()).isEqualTo(4.0);
        assertThat(replay.log().loggedDurations())
                .containsEntry("model_loading", 5.444196)
                .containsEntry("compile_cache_load", 2.087)
                .containsEntry("compilation", 8.41)
                .containsEntry("graph_capture", 4.0)
                .doesNotContainKeys("download", "compile");
        assertThat(EnginePhase.compileCacheHit(replay.log().loggedDurations())).isTrue();
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Loading weights took 4.71 seconds (read from disk)",
                        "metrics: counters started at zero",
                        "log: compiled graphs loaded from the torch.compile cache in 2.09 s (compile cache hit)");
    }

    @Test
    void v010ColdStartInTheOlderFormatsIsColdWithEveryFigure() {
        Replay replay = replay("v0.10-cold.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().vllmVersion()).isEqualTo("0.10.1.1");
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-08-12T08:42:32Z"));
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(17.38);
        assertThat(replay.log().modelLoadingGib()).isEqualTo(14.9889);
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(18.104821);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(451_536L);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(31.04);
    }

    @Test
    void composePrefixedColdStartReadsAsTheSameStartWithoutThePrefix() {
        Replay compose = replay("v0.31-compose-cold.log");
        Replay plain = replay("v0.31-cold.log");

        assertThat(compose.log()).isEqualTo(plain.log());
        assertThat(compose.attribution()).isEqualTo(plain.attribution());
        assertThat(compose.path()).isEqualTo(RestartPath.COLD);
    }

    @Test
    void bracketedTimestampPrefixedPreloadHitIsAHitDatedFromThePrefixesYear() {
        // Read a year and a half later: the prefix's own year dates the lines, not the reading.
        Clock muchLater = Clock.fixed(Instant.parse("2028-03-01T00:00:00Z"), ZoneOffset.UTC);
        Replay replay = replay("v0.31-iso-bracket-preload-hit.log", muchLater, new VllmLogParser(muchLater));

        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T14:10:02Z"));
        assertThat(replay.log().mappedTensors()).isEqualTo(399);
        assertThat(replay.log().mappedMode()).isEqualTo("zero_copy");
        assertThat(replay.log().weightsHeldOutside()).isTrue();
        assertThat(replay.log().weightsHeldOutsideGib()).isEqualTo(15.27);
        assertThat(replay.log().modelLoadingGib()).isZero();
        assertThat(replay.log().loadFormat()).isEqualTo("ipc_cache");
        assertThat(replay.log().engineInitSeconds()).isEqualTo(17.84);
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Mapped 399 tensors from the weight cache daemon (zero_copy mode)",
                        "log: no 'Loading weights took' line: nothing read from disk");
    }

    @Test
    void dockerDesktopPrefixedFallbackIsAFallbackWithVllmsReason() {
        Replay replay = replay("v0.31-docker-desktop-preload-fallback.log");

        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(replay.attribution().fallbackReason()).isEqualTo("WeightCacheKey mismatch on fields: ['revision']");
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T21:55:02Z"));
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(5.02);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(648_224L);
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Weight cache unusable (WeightCacheKey mismatch on fields: ['revision']); falling back to "
                                + "disk loading",
                        "log: Loading weights took 5.02 seconds (read from disk)");
    }

    @Test
    void runaiStreamerColdStartWithoutALoadingWeightsLineIsColdAndSaysWhy() {
        Replay replay = replay("v0.31-runai-streamer.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isNull();
        assertThat(replay.log().loadFormat()).isEqualTo("runai_streamer");
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(9.102344);
        assertThat(replay.evidence())
                .containsExactly(
                        "log: no 'Loading weights took' line: load_format 'runai_streamer' logs none",
                        "log: Model loading took 15.27 GiB memory and 9.10 seconds (weights loaded by the engine)",
                        "log: init engine took 21.37 seconds (a full engine initialization)",
                        "log: no weight-cache line (Mapped N tensors, Weights are held outside this process, Weight "
                                + "cache unusable): the cache was not used",
                        "metrics: counters started at zero");
    }

    @Test
    void tensorizerColdStartWithoutALoadingWeightsLineIsCold() {
        Replay replay = replay("v0.31-tensorizer.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadFormat()).isEqualTo("tensorizer");
        assertThat(replay.evidence())
                .startsWith("log: no 'Loading weights took' line: load_format 'tensorizer' logs none")
                .contains("log: init engine took 20.66 seconds (a full engine initialization)");
    }

    @Test
    void speculativeDecodingRecordsTheTargetsAndTheDraftersLoadingAndUsesTheTargets() {
        Replay replay = replay("v0.31-speculative-decoding.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(838.42);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isEqualTo(1.13);
        assertThat(replay.evidence())
                .containsExactly(
                        "log: Loading weights took 838.42 seconds (read from disk)",
                        "log: the speculative-decoding drafter's Loading weights took 1.13 seconds",
                        "metrics: counters started at zero");
    }

    @Test
    void dataParallelStartKeepsEveryCoresHeaderAndCountsItsApiServers() {
        Replay replay = replay("v0.31-data-parallel.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().header()).isTrue();
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-06T09:00:00Z"));
        assertThat(replay.log().engineArgs()).contains("'data_parallel_size': 4");
        assertThat(replay.log().apiServers()).isEqualTo(4);
        // Each core loads its own copy: the slowest is the start's.
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(23.55);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isNull();
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(1_016_832L);
    }

    @Test
    void dataParallelCoreWhoseHeaderComesLateDoesNotResetTheStart() {
        Replay replay = replay("v0.31-data-parallel-late-header.log");

        assertThat(replay.log().header()).isTrue();
        assertThat(replay.log().engineArgs()).contains("'data_parallel_size': 2");
        assertThat(replay.log().apiServers()).isEqualTo(2);
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-06T09:30:00Z"));
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(22.84);
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
    }

    @Test
    void tensorParallelWorkersEachLoadTheirShardAndTheSlowestCounts() {
        Replay replay = replay("v0.31-tensor-parallel.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(31.48);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isNull();
        assertThat(replay.log().modelLoadingGib()).isEqualTo(30.59);
    }

    @Test
    void rayWorkersLinesBehindTwoProcessPrefixesAreRead() {
        Replay replay = replay("v0.16-ray-pipeline-parallel.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().vllmVersion()).isEqualTo("0.16.1rc1.dev265+gd106bf39f");
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(1.87);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isNull();
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(223_104L);
    }

    @Test
    void startThatRunsOutOfGpuMemoryFailsWithTheRootException() {
        Replay replay = replay("v0.31-startup-failure-oom.log");

        assertThat(replay.log().startFailure())
                .isEqualTo("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                        + "capacity of 139.81 GiB of which 1.06 GiB is free. Process 3112 has 122.40 GiB memory in use. "
                        + "Of the allocated memory 15.90 GiB is allocated by PyTorch, and 210.12 MiB is reserved by "
                        + "PyTorch but unallocated.");
        assertThat(replay.log().fatal()).isNull();
        // It loaded its weights from disk before it failed.
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(4.88);
    }

    @Test
    void composePrefixedStartThatFindsNoKvCacheMemoryFailsWithTheRootException() {
        Replay replay = replay("v0.16-compose-startup-failure.log");

        assertThat(replay.log().startFailure())
                .isEqualTo("ValueError: No available memory for the cache blocks. Try increasing "
                        + "`gpu_memory_utilization` when initializing the engine. See "
                        + "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
        assertThat(replay.log().availableKvCacheGib()).isEqualTo(-8.59);
        assertThat(replay.log().engineArgs())
                .contains("'api_key': '<redacted>'")
                .doesNotContain("EMPTY");
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
    }

    @Test
    void engineThatDiesWhileServingIsFatalWithTheRootExceptionNotARequestsError() {
        Replay replay = replay("v0.31-cri-fatal-error.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-06T12:00:00Z"));
        assertThat(replay.log().fatal())
                .isEqualTo("torch.AcceleratorError: CUDA error: an illegal memory access was encountered");
        assertThat(replay.log().startFailure()).isNull();
    }

    @Test
    void logReadLongAfterItWasWrittenIsDatedByTheFilesModificationTime() throws IOException {
        Path file = dir.resolve("engine.log");
        Files.write(file, lines("v0.31-cold.log"));
        Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2026-10-05T15:00:00Z")));
        // Eight months later: the closest 10-05 to now would be next October's.
        Clock later = Clock.fixed(Instant.parse("2027-06-01T00:00:00Z"), ZoneOffset.UTC);
        LogTail tail = new LogTail(file, Duration.ofHours(1), DataSize.ofKilobytes(64), Schedulers.boundedElastic());
        EngineLogEvidence log =
                new EngineLogEvidence(tail, new VllmLogParser(later, tail::modifiedAt), later, Duration.ofSeconds(1));
        Disposable following = log.follow();
        try {
            LogFindings findings = log.caughtUp("the first start").block(Duration.ofSeconds(10));
            assertThat(findings.firstLineAt()).isEqualTo(Instant.parse("2026-10-05T14:02:11Z"));
            assertThat(findings.loadingWeightsSeconds()).isEqualTo(4.71);
        } finally {
            following.dispose();
        }
    }

    @Test
    void logReadMoreThanHalfAYearLaterWithoutAModificationTimeIsNotDatedInTheFuture() {
        Clock later = Clock.fixed(Instant.parse("2027-06-01T00:00:00Z"), ZoneOffset.UTC);
        Replay replay = replay("v0.31-cold.log", later, new VllmLogParser(later));

        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T14:02:11Z"));
    }

    /**
     * The engine starts readiness saw while the lines of {@code files} were read live (after readygate came up), and
     * the log window's findings at the end.
     */
    record Starts(int began, List<String> failures, EngineState state, LogFindings findings) {}

    Starts live(List<String> lines) {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        List<EngineStateChanged> changes = new ArrayList<>();
        List<EngineLogEvidence> evidence = new ArrayList<>();
        AtomicInteger ids = new AtomicInteger();
        EngineStateMachine machine = new EngineStateMachine(
                new ReadinessRules(1, 3),
                READ_AT,
                change -> {
                    changes.add(change);
                    evidence.forEach(log -> log.onEngineStateChanged(change));
                },
                () -> "s" + ids.incrementAndGet());
        EngineLogEvidence log = new EngineLogEvidence(
                new LogTail(
                        dir.resolve("unused.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                // Read a day after they were written: their zone (UTC) is configured, not learned from read times.
                new VllmLogParser(clock, () -> null, ZoneOffset.UTC),
                clock,
                Duration.ofSeconds(1),
                machine::apply);
        evidence.add(log);
        log.backlogRead();
        lines.forEach(log::line);
        List<String> failures = changes.stream()
                .filter(change -> change.cause() instanceof Observation.StartFailed)
                .map(change -> change.ended().id() + " " + ((Observation.StartFailed) change.cause()).detail())
                .toList();
        return new Starts(
                (int) changes.stream().filter(EngineStateChanged::startBegan).count(),
                failures,
                machine.current(),
                log.current());
    }

    @ParameterizedTest
    @CsvSource({
        "v0.31-cold.log, 1",
        "v0.10-cold.log, 1",
        "v0.31-compose-cold.log, 1",
        "v0.31-data-parallel.log, 1",
        "v0.31-data-parallel-late-header.log, 1",
        "v0.31-tensor-parallel.log, 1",
        "v0.16-ray-pipeline-parallel.log, 1",
        "v0.31-speculative-decoding.log, 1",
        "v0.31-runai-streamer.log, 1",
        "v0.31-iso-bracket-preload-hit.log, 1",
        "v0.31-docker-desktop-preload-fallback.log, 1"
    })
    void serverProcessLoggedLiveIsOneStartWhateverItsCoresAndWorkersLog(String file, int starts) {
        Starts seen = live(lines(file));

        assertThat(seen.began()).as(file).isEqualTo(starts);
        assertThat(seen.failures()).as(file).isEmpty();
        // The start the log began keeps all of its evidence: a core's late header, the API servers' lines reset
        // nothing.
        assertThat(seen.findings()).as(file).isEqualTo(replay(file).log());
        // Loading: its port is not open yet (no probe in this test).
        assertThat(seen.state().kind()).as(file).isEqualTo(EngineState.Kind.DOWN);
    }

    @Test
    void startsThatDieBeforeServingAreEachOneStartEndedWithVllmsReason() {
        // The compose service restarts the failing container: the same failure three times in the same log.
        List<String> loop = new ArrayList<>();
        Collections.nCopies(3, lines("v0.16-compose-startup-failure.log")).forEach(loop::addAll);

        Starts seen = live(loop);

        String reason = "ValueError: No available memory for the cache blocks. Try increasing "
                + "`gpu_memory_utilization` when initializing the engine. See "
                + "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
        assertThat(seen.began()).isEqualTo(3);
        assertThat(seen.failures()).containsExactly("s1 " + reason, "s2 " + reason, "s3 " + reason);
        assertThat(seen.state()).isEqualTo(new EngineState.Down(READ_AT, Reason.START_FAILED, reason));

        Starts oom = live(lines("v0.31-startup-failure-oom.log"));
        assertThat(oom.began()).isEqualTo(1);
        assertThat(oom.failures())
                .singleElement()
                .asString()
                .startsWith("s1 torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
    }

    @Test
    void workerThatRaisesBeforeTheEngineCoreGivesUpIsTheStartsCause() {
        // The engine core's own traceback ends in vLLM's wrapper ("Exception: WorkerProc initialization failed ... See
        // stack trace for root cause."); the cause is the first exception of the failing start, the worker's.
        Replay replay = replay("v0.31-worker-root-cause.log");

        assertThat(replay.log().startFailure())
                .isEqualTo("torch.AcceleratorError: CUDA error: an illegal memory access was encountered");

        Starts seen = live(lines("v0.31-worker-root-cause.log"));
        assertThat(seen.failures())
                .containsExactly("s1 torch.AcceleratorError: CUDA error: an illegal memory access was encountered");

        // Read as the engine core gives up, before the API server's last line: the worker's exception already is the
        // cause, not "EngineCore failed to start.".
        List<String> upToTheCore = lines("v0.31-worker-root-cause.log").stream()
                .takeWhile(line -> !line.startsWith("(EngineCore pid=90) Process EngineCore:"))
                .toList();
        assertThat(live(upToTheCore).findings().startFailure())
                .isEqualTo("torch.AcceleratorError: CUDA error: an illegal memory access was encountered");
    }

    @Test
    void configurationErrorTheApiServerRaisesFailsTheStartWithPydanticsMessageAndNoSecret() {
        Replay replay = replay("v0.31-api-server-validation-error.log");

        String reason = "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig: Value error,"
                + " Cannot find the config file for awq_marlin";
        assertThat(replay.log().startFailure()).isEqualTo(reason);

        Starts seen = live(lines("v0.31-api-server-validation-error.log"));
        assertThat(seen.began()).isEqualTo(1);
        assertThat(seen.failures())
                .singleElement()
                .asString()
                .startsWith("s1 pydantic_core._pydantic_core.ValidationError");
        assertThat(seen.state().kind()).isEqualTo(EngineState.Kind.DOWN);
        assertThat(((EngineState.Down) seen.state()).reason()).isEqualTo(Reason.START_FAILED);
        assertThat(seen.findings().startFailure()).isEqualTo(reason).doesNotContain("hf_SECRET");
    }

    @Test
    void apiServerProcessThatDiesWhileTheCoresLoadFailsTheStartWithItsException() {
        String reason = "TimeoutError: Timed out waiting for engines to send initial message on input socket.";
        assertThat(replay("v0.31-api-server-died-loading.log").log().startFailure())
                .isEqualTo(reason);

        Starts seen = live(lines("v0.31-api-server-died-loading.log"));
        assertThat(seen.failures()).containsExactly("s1 " + reason);
    }

    @Test
    void localTimesBesideACollectorsUtcClockAreReadInTheEnginesZone() {
        // vLLM writes local time (UTC-07:00 here) with no zone; the shipper's bracketed clock is UTC.
        Clock clock = Clock.fixed(Instant.parse("2025-08-12T18:00:00Z"), ZoneOffset.UTC);
        Replay replay = replay("v0.10-collector-utc-beside-local-time.log", clock, new VllmLogParser(clock));

        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2025-08-12T08:42:32Z"));
        assertThat(replay.log().timeZone())
                .isEqualTo(new LogTimeZone(ZoneOffset.ofHours(-7), LogTimeZone.Source.COLLECTOR_CLOCK));
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.evidence())
                .contains("log: vLLM's log times are UTC-07:00 (learned from the log collector's clock on the same"
                        + " lines)");
    }

    @Test
    void localTimesReadAsTheyAreWrittenTeachTheEnginesZone() {
        // The same start written in UTC+08:00 with no collector's clock, each line read a second after it was
        // written.
        List<String> local = lines("v0.10-cold.log").stream()
                .map(line -> line.replace("08-12 08:", "08-12 16:"))
                .toList();
        Clock clock = Clock.fixed(Instant.parse("2026-08-12T08:42:33Z"), ZoneOffset.UTC);
        EngineLogEvidence log = new EngineLogEvidence(
                new LogTail(
                        dir.resolve("unused.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(clock),
                clock,
                Duration.ofSeconds(1));
        log.backlogRead();
        local.forEach(log::line);

        assertThat(log.current().firstLineAt()).isEqualTo(Instant.parse("2026-08-12T08:42:32Z"));
        assertThat(log.current().timeZone())
                .isEqualTo(new LogTimeZone(ZoneOffset.ofHours(8), LogTimeZone.Source.READ_TIME));
    }

    @Test
    void aConfiguredZoneReadsTheLogsTimesAndNothingIsAssumed() {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        Replay replay = replay(
                "v0.31-cold.log", clock, new VllmLogParser(clock, () -> null, java.time.ZoneId.of("Asia/Shanghai")));

        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T06:02:11Z"));
        assertThat(replay.evidence())
                .contains("log: vLLM's log times are Asia/Shanghai (set by" + " readygate.evidence.log-time-zone)");
    }

    @Test
    void timesNothingToldTheZoneOfAreReadAsUtcAndTheRecordSaysSo() {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        Replay replay = replay("v0.31-cold.log", clock, new VllmLogParser(clock));

        assertThat(replay.log().timeZone()).isEqualTo(LogTimeZone.ASSUMED_UTC);
        assertThat(replay.evidence()).anyMatch(line -> line.startsWith("log: vLLM's log times read as UTC (assumed:"));
    }

    @Test
    void aPluginsLoggerFormatIsReadByVllmsMessagesWhereverThePrefixPutsThem() {
        Replay replay = replay("v0.31-plugin-logger-format.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().vllmVersion()).isEqualTo("0.31.0");
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-06-10T11:29:41Z"));
        assertThat(replay.log().engineArgs()).contains("'model': 'Qwen/Qwen3-32B'");
        // The first 'Loading weights took' is vLLM's; the one inside the quoted prompt it echoes is not.
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(27.85);
        assertThat(replay.log().drafterLoadingWeightsSeconds()).isNull();
        assertThat(replay.log().modelLoadingGib()).isEqualTo(29.04);
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(28.734112);
        assertThat(replay.log().availableKvCacheGib()).isEqualTo(94.12);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(385_536L);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(45.10);
        assertThat(replay.log().unreadable()).isNull();
    }

    @Test
    void theCpuBackendsKvCacheSettingIsItsAvailableKvCache() {
        Replay replay = replay("v0.29-cpu-backend.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().availableKvCacheGib()).isEqualTo(1.0);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(29_056L);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(0.34);
    }

    @Test
    void aLogWithNoLineReadygateCanReadIsANamedGapNotNoLog() {
        // Another program's log configured as the engine's: an nginx access log.
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        EngineLogEvidence log = new EngineLogEvidence(
                new LogTail(
                        dir.resolve("unused.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(clock, () -> null, ZoneOffset.UTC),
                clock,
                Duration.ofSeconds(1));
        for (int i = 0; i < EngineLogEvidence.UNREADABLE_AFTER - 1; i++) {
            log.line("10.0.0." + i + " - - [06/Oct/2026:17:59:" + (10 + i % 50)
                    + " +0000] \"POST /v1/completions HTTP/1.1\" 200 512 \"-\" \"python-requests/2.32\"");
        }
        assertThat(log.unreadable()).as("too few lines to tell").isNull();

        log.line("10.0.0.99 - - [06/Oct/2026:18:00:00 +0000] \"GET /health HTTP/1.1\" 200 0 \"-\" \"kube-probe/1.31\"");

        assertThat(log.unreadable())
                .startsWith("engine log unreadable: " + EngineLogEvidence.UNREADABLE_AFTER + " lines read since "
                        + READ_AT + ", none in a format readygate reads");
        LogFindings findings = log.current();
        assertThat(findings.unreadable()).isEqualTo(log.unreadable());
        StartEvidence evidence = new StartEvidence(findings, 0.0, EvidenceSources.Reading.none());
        assertThat(RestartAttribution.attribute(evidence).evidence()).contains("log: " + log.unreadable());
    }

    @Test
    void aReadableLogIsNeverAGapHoweverManyLinesMatchNothing() {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        EngineLogEvidence log = new EngineLogEvidence(
                new LogTail(
                        dir.resolve("unused.log"),
                        Duration.ofHours(1),
                        DataSize.ofKilobytes(64),
                        Schedulers.immediate()),
                new VllmLogParser(clock, () -> null, ZoneOffset.UTC),
                clock,
                Duration.ofSeconds(1));
        lines("v0.31-cold.log").forEach(log::line);
        for (int i = 0; i < 2 * EngineLogEvidence.UNREADABLE_AFTER; i++) {
            log.line("(APIServer pid=1) INFO:     127.0.0.1:53422 - \"GET /health HTTP/1.1\" 200 OK");
        }

        assertThat(log.unreadable()).isNull();
        assertThat(log.current().unreadable()).isNull();
    }

    /**
     * The window {@code file}'s lines leave, folded one by one as readygate reads them, each with the container a
     * collector named on it (no engine state changes).
     */
    static LogWindow fold(String file) {
        VllmLogParser parser = new VllmLogParser(Clock.fixed(READ_AT, ZoneOffset.UTC), () -> null, ZoneOffset.UTC);
        LogWindow window = LogWindow.EMPTY;
        for (String line : lines(file)) {
            LogEvent event = parser.parse(line);
            if (event != null) {
                window = window.next(event, READ_AT, VllmLogParser.container(line))
                        .window();
            }
        }
        return window;
    }

    @Test
    void aLogWithoutServerHeadersKeepsAPreloadHitApartFromTheFallbackThatFollowedIt() {
        Replay replay = replay("v0.31-headerless-preload-hit-then-fallback.log");

        // Issue 28 item 7: the second start is the fallback alone, its figures its own.
        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(replay.log().mappedTensors()).isNull();
        assertThat(replay.log().weightsHeldOutside()).isFalse();
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(5.02);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(27.95);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(648_224L);
        assertThat(replay.log().fatal()).isNull();
        assertThat(replay.log().otherEngine()).isNull();
        // The hit it followed is kept whole, for when readiness sees that start end: a hit, not swallowed.
        LogFindings hit = Objects.requireNonNull(
                fold("v0.31-headerless-preload-hit-then-fallback.log").closedByHeader());
        assertThat(hit.mappedTensors()).isEqualTo(399);
        assertThat(hit.cacheFallbackReason()).isNull();
        assertThat(hit.loadingWeightsSeconds()).isNull();
        assertThat(hit.engineInitSeconds()).isEqualTo(17.84);
        assertThat(RestartAttribution.attribute(new StartEvidence(hit, 0.0, EvidenceSources.Reading.none()))
                        .path())
                .isEqualTo(RestartPath.PRELOAD_HIT);
    }

    @Test
    void twoEnginesWritingToOneLogAreNeverMergedIntoOneStart() {
        Replay replay = replay("v0.31-1p1d-two-engines.log");

        // Issue 28 item 7: the decode engine's start (the engine core that began last), with its own figures only:
        // not the prefill's "Loading weights took 2.36 seconds" beside the decode's "init engine ... took 1.59 s".
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(2.41);
        assertThat(replay.log().modelLoadingSeconds()).isEqualTo(2.755102);
        assertThat(replay.log().availableKvCacheGib()).isEqualTo(60.09);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(562_624L);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(1.59);
        assertThat(replay.log().otherEngine()).startsWith("two engines write to this log: EngineCore pid=3046 wrote");
        assertThat(replay.evidence()).contains("log: " + replay.log().otherEngine());
        // Every line kept is the decode engine's: its engine core and the API server spawned in the same order.
        assertThat(fold("v0.31-1p1d-two-engines.log").events())
                .extracting(received -> received.event().pid())
                .containsOnly(3047, 2811);
    }

    @Test
    void twoInstancesInSeparateContainersWithTheSamePidsAreToldApartByTheCollectorsPrefix() {
        Replay replay = replay("v0.31-compose-two-instances-same-pids.log");

        // Issue 28 item 7: both run APIServer pid 1 and EngineCore pid 95; docker compose's prefix tells them apart.
        // readygate follows the instance whose engine core began last (vllm-b), its figures only, and names the gap.
        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(6.93);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(372_592L);
        assertThat(replay.log().engineInitSeconds()).isEqualTo(41.87);
        assertThat(replay.log().otherEngine()).startsWith("two engines write to this log: EngineCore pid=95@vllm-a-1");
        LogWindow window = fold("v0.31-compose-two-instances-same-pids.log");
        assertThat(window.events()).extracting(LogWindow.Received::container).containsOnly("vllm-b-1");
    }
}
