package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.restart.FallbackReason;
import dev.readygate.restart.RestartPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SGLang's start-up logs ({@code src/test/resources/sglang-logs}, each saying in its header from which SGLang source
 * each format comes), through the real parser, log window and attribution: a cold start, a weight-cache hit (PR #27139's
 * daemon, {@code --weight-cache-mode client}) and its fallbacks to disk, with their reasons (issue 29, item 5).
 */
class SglangLogCorpusTests {

    static final Instant READ_AT = Instant.parse("2026-10-06T18:00:00Z");

    @TempDir
    Path dir;

    VllmLogCorpusTests.Replay replay(String file) {
        Clock clock = Clock.fixed(READ_AT, ZoneOffset.UTC);
        return VllmLogCorpusTests.replay(
                dir,
                VllmLogCorpusTests.lines("sglang-logs", file),
                clock,
                new VllmLogParser(clock, () -> null, ZoneOffset.UTC));
    }

    @Test
    void aColdStartIsColdWithItsWeightLoadKvCacheAndGraphCapture() {
        VllmLogCorpusTests.Replay replay = replay("sglang-2026-cold.log");

        assertThat(replay.path()).isEqualTo(RestartPath.COLD);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(4.93);
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(759_424L);
        assertThat(replay.log().graphCaptureSeconds()).isEqualTo(5.92);
        assertThat(replay.log().graphCaptureGib()).isEqualTo(1.39);
        assertThat(replay.log().mappedTensors()).isNull();
        assertThat(replay.log().cacheFallbackReason()).isNull();
        // SGLang's timestamps carry the year: the first line dates the start.
        assertThat(replay.log().firstLineAt()).isEqualTo(Instant.parse("2026-10-05T14:02:11Z"));
        assertThat(replay.evidence()).contains("log: Loading weights took 4.93 seconds (read from disk)");
        // Its arguments, from server_args, the API key redacted.
        assertThat(replay.log().engineArgs())
                .startsWith("ServerArgs(model_path='Qwen/Qwen3-8B'")
                .contains("weight_cache_mode='off'")
                .doesNotContain("sk-sglang-9f8e7d6c5b4a");
    }

    @Test
    void aWeightCacheHitIsAPreloadHitFromItsIpcLoaderLines() {
        VllmLogCorpusTests.Replay replay = replay("sglang-2026-weight-cache-hit.log");

        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(replay.log().mappedTensors()).isEqualTo(399);
        assertThat(replay.log().mappedMode()).isEqualTo("sglang ipc");
        assertThat(replay.log().kvCacheSizeTokens()).isEqualTo(1_518_848L);
        assertThat(replay.evidence())
                .contains("log: Mapped 399 tensors from the weight cache daemon (sglang ipc mode)");
    }

    @Test
    void aFallbackWhoseWarningGivesNoReasonIsADaemonThatIsNotThere() {
        VllmLogCorpusTests.Replay replay = replay("sglang-2026-weight-cache-fallback.log");

        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(replay.log().cacheFallbackReason())
                .isEqualTo("SGLang: Weight cache not available or config mismatch");
        // In client mode SGLang falls back only when no daemon is there: its "or config mismatch" fails the start.
        assertThat(FallbackReason.of(replay.log().cacheFallbackReason())).isEqualTo(FallbackReason.DAEMON_UNAVAILABLE);
        assertThat(replay.log().loadingWeightsSeconds()).isEqualTo(5.02);
    }

    @Test
    void aFallbackKeepsTheReasonLoggedBeforeItsWarning() {
        VllmLogCorpusTests.Replay replay = replay("sglang-2026-registry-socket-not-found.log");

        assertThat(replay.path()).isEqualTo(RestartPath.PRELOAD_FALLBACK);
        assertThat(replay.log().cacheFallbackReason())
                .isEqualTo("Daemon socket not found at"
                        + " /tmp/sglang_weight_cache_GPU-5c3a1f2e-8b7d-4e0a-9f61-2d4c8e7b9a10.sock");
        assertThat(FallbackReason.of(replay.log().cacheFallbackReason())).isEqualTo(FallbackReason.DAEMON_UNAVAILABLE);
    }
}
