package dev.readygate;

import static dev.readygate.ReadygateClients.client;
import static dev.readygate.ReadygateClients.prometheus;
import static dev.readygate.ReadygateClients.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * GPU memory over simulated restart cycles, read through the real nvidia-smi reader from the simulator's GPU: each
 * memory signal fires when the simulator misbehaves that way, and stays quiet when it does not.
 */
class GpuMemoryCycleTests {

    static final long MIB = 1024L * 1024;

    /** The simulator's revision, the one a rollback goes back to. */
    static final String FIRST_REVISION = "c1899de289a04d12100db370d81485cdf75e47ca";

    @TempDir
    Path workDir;

    /**
     * The engine stays down for a second or more on every start (as a real one does for its Python imports and CUDA
     * init), and readygate checks it every 200 ms, so readygate sees it go away and reads the GPU after the stop.
     */
    RunningSimulator simulator(String... overrides) {
        List<String> all = new ArrayList<>(List.of("load-time=1500ms", "timing.preload-hit-load-time=1500ms"));
        all.addAll(List.of(overrides));
        return RunningSimulator.serving(workDir.resolve("engine"), all.toArray(String[]::new));
    }

    ConfigurableApplicationContext readygate(RunningSimulator engine, String... extra) {
        Path sim = workDir.resolve("engine");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                // Reactor Netty's event loops stop at once when the context closes, not after a 2 s quiet period (the
                // server has shut down gracefully by then): each test's readygate closes about 2 s sooner.
                "--spring.reactor.netty.shutdown-quiet-period=0s",
                "--readygate.engine.base-url=" + engine.baseUrl(),
                "--readygate.state-dir=" + workDir.resolve("state"),
                "--readygate.evidence.engine-log=" + sim.resolve("engine.log"),
                "--readygate.evidence.daemon-socket-dir=" + sim.resolve("weight-cache"),
                "--readygate.probe.representative.prompt-tokens=100",
                "--readygate.probe.representative.output-tokens=4",
                "--readygate.gpu.nvidia-smi=" + engine.nvidiaSmi(),
                "--readygate.gpu.interval=1s",
                "--readygate.gpu.timeout=1s",
                "--readygate.memory.after-stop-delay=200ms",
                "--readygate.probe.ready-interval=300ms",
                "--readygate.engine.request-timeout=300ms",
                // The tests restart the engine cycle after cycle on purpose: not a restart loop to hold.
                "--readygate.restart.loop-hold=0s"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(ReadygateApplication.class).run(args.toArray(String[]::new));
    }

    /** Restarts along {@code path} and waits until readygate recorded the start and the previous one's stop. */
    static JsonNode restart(RunningSimulator engine, WebTestClient client, StartupPath path) {
        await().atMost(Duration.ofSeconds(20))
                .until(() ->
                        !status(client).at("/restarts/history/0/memory/atReady").isMissingNode());
        int before = status(client).at("/restarts/history").size();
        engine.restartAndAwait(path);
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                JsonNode history = status(client).at("/restarts/history");
                return history.size() > before
                        && history.get(0).get("outcome").asString().equals("ready")
                        && !history.get(0).at("/memory/atReady").isNull()
                        && !history.get(1).at("/memory/afterStop").isNull();
            });
        } catch (ConditionTimeoutException timeout) {
            JsonNode now = status(client);
            throw new AssertionError(
                    "readygate did not record the " + path + " start with its memory (records before: " + before
                            + ")\nlatest: " + now.at("/restarts/history/0") + "\nprevious: "
                            + now.at("/restarts/history/1") + "\nmemory: " + now.at("/memory"),
                    timeout);
        }
        return status(client);
    }

    @Test
    void sameMemoryEveryCycleAndADaemonThatKeepsItsWeightsRaiseNothing() {
        try (RunningSimulator engine = simulator();
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            JsonNode status = null;
            for (int i = 0; i < 3; i++) {
                status = restart(engine, client, StartupPath.PRELOAD_HIT);
            }

            JsonNode latest = status.at("/restarts/history/0");
            assertThat(latest.get("path").asString()).isEqualTo("preload_hit");
            assertThat(latest.at("/memory/atReady/byOwnerMiB/preload_daemon").asLong())
                    .isEqualTo(1668);
            assertThat(latest.at("/memory/atReady/byOwnerMiB/engine").asLong()).isEqualTo(7688);
            assertThat(latest.at("/memory/beforeStart/byOwnerMiB/preload_daemon")
                            .asLong())
                    .isEqualTo(1668);
            assertThat(latest.at("/memory/beforeStart/byOwnerMiB").has("engine"))
                    .isFalse();
            assertThat(status.at("/restarts/history/1/memory/afterStop/usedMiB").asLong())
                    .isEqualTo(1668);
            JsonNode memory = status.at("/memory");
            assertThat(memory.get("signals").isEmpty()).isTrue();
            assertThat(memory.at("/leak_across_restarts/bytesPerCycle").asLong())
                    .isZero();
            assertThat(memory.at("/held_after_stop/holders/0/owner").asString()).isEqualTo("preload_daemon");
            assertThat(memory.at("/held_after_stop/holders/0/expected").booleanValue())
                    .isTrue();
            assertThat(prometheus(client))
                    .contains("readygate_memory_signal{signal=\"leak_across_restarts\"} 0.0")
                    .contains("readygate_memory_signal{signal=\"held_after_stop\"} 0.0")
                    .contains("readygate_memory_signals_total{signal=\"held_after_stop\"} 0.0")
                    .contains("readygate_memory_drift_bytes_per_cycle 0.0")
                    .contains("readygate_cycle_memory_bytes{moment=\"at_ready\"} " + (double) ((1668 + 7688) * MIB))
                    .contains("readygate_cycle_memory_bytes{moment=\"after_stop\"} " + (double) (1668 * MIB));
        }
    }

    @Test
    void memoryLeftBehindEveryCycleIsALeakAcrossRestartsAndHeldAfterStop() {
        try (RunningSimulator engine = simulator("memory.leak-per-cycle-mib=512");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            for (int i = 0; i < 3; i++) {
                restart(engine, client, StartupPath.PRELOAD_HIT);
            }
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> status(client).at("/memory/signals").size() == 2);

            JsonNode memory = status(client).at("/memory");
            assertThat(memory.get("signals").valueStream().map(JsonNode::asString))
                    .containsExactlyInAnyOrder("leak_across_restarts", "held_after_stop");
            assertThat(memory.at("/leak_across_restarts/bytesPerCycle").asLong())
                    .isEqualTo(512 * MIB);
            assertThat(memory.at("/leak_across_restarts/byOwnerBytesPerCycle/preload_daemon")
                            .asLong())
                    .isEqualTo(512 * MIB);
            assertThat(memory.at("/held_after_stop/holders/0/why").asString())
                    .isEqualTo("the preload daemon holds 512 MiB more than before the start");
            assertThat(prometheus(client))
                    .contains("readygate_memory_signal{signal=\"leak_across_restarts\"} 1.0")
                    .contains("readygate_memory_signals_total{signal=\"leak_across_restarts\"} 1.0")
                    .contains("readygate_memory_drift_bytes_per_cycle " + (double) (512 * MIB))
                    .contains("readygate_memory_held_after_stop_bytes " + (double) (512 * MIB));
        }
    }

    @Test
    void aLeakThatTheKvCacheAbsorbsShowsAsAShrinkingKvCache() {
        try (RunningSimulator engine = simulator("memory.leak-per-cycle-mib=512", "memory.leak-shrinks-kv-cache=true");
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            restart(engine, client, StartupPath.PRELOAD_HIT);
            restart(engine, client, StartupPath.PRELOAD_HIT);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> status(client)
                            .at("/memory/signals")
                            .valueStream()
                            .anyMatch(signal -> signal.asString().equals("kv_cache_shrinking")));

            JsonNode kv = status(client).at("/memory/kv_cache_shrinking");
            List<Long> tokens =
                    kv.get("tokens").valueStream().map(JsonNode::asLong).toList();
            assertThat(tokens).hasSize(2);
            assertThat(tokens.get(0) - tokens.get(1)).isEqualTo(512 * 1024 / 112);
            assertThat(status(client).at("/memory/signals").valueStream().map(JsonNode::asString))
                    .doesNotContain("leak_across_restarts");
            assertThat(prometheus(client)).contains("readygate_memory_signal{signal=\"kv_cache_shrinking\"} 1.0");
        }
    }

    /**
     * A cache hit, then a rollout to v2 that the daemon does not follow: the next start falls back to disk and
     * readygate raises {@code stale_cache}. Returns the status then.
     */
    static JsonNode rolloutTheDaemonDoesNotFollow(RunningSimulator engine, WebTestClient client) {
        restart(engine, client, StartupPath.PRELOAD_HIT);
        engine.switchRevision("v2");
        JsonNode afterSwitch = restart(engine, client, StartupPath.PRELOAD_HIT);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> status(client)
                        .at("/memory/signals")
                        .valueStream()
                        .anyMatch(signal -> signal.asString().equals("stale_cache")));
        return afterSwitch;
    }

    @Test
    void aRolloutTheDaemonDidNotFollowLeavesAStaleCacheUntilTheDaemonCachesTheNewRevision() {
        try (RunningSimulator engine = simulator();
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            JsonNode afterSwitch = rolloutTheDaemonDoesNotFollow(engine, client);

            assertThat(afterSwitch.at("/restarts/history/0/path").asString()).isEqualTo("preload_fallback");
            assertThat(afterSwitch.at("/restarts/history/0/fallbackReason").asString())
                    .contains("WeightCacheKey mismatch on fields: ['revision']");
            JsonNode stale = status(client).at("/memory/stale_cache");
            assertThat(stale.get("checkpoint").asString()).endsWith("@v2");
            assertThat(stale.get("staleBytes").asLong() / MIB).isBetween(1146L, 1148L);
            assertThat(prometheus(client)).contains("readygate_memory_signal{signal=\"stale_cache\"} 1.0");

            engine.daemonCachesCurrentRevision();
            restart(engine, client, StartupPath.PRELOAD_HIT);

            await().atMost(Duration.ofSeconds(5))
                    .until(() ->
                            status(client).at("/memory/stale_cache/staleBytes").asLong(-1) == 0);
            assertThat(status(client).at("/restarts/history/0/path").asString()).isEqualTo("preload_hit");
            assertThat(prometheus(client))
                    .contains("readygate_memory_signal{signal=\"stale_cache\"} 0.0")
                    .contains("readygate_stale_cache_bytes 0.0")
                    .contains("readygate_memory_signals_total{signal=\"stale_cache\"} 1.0");

            // The rollback, as the demo does it: the daemon caches the first revision again, the engine starts cold.
            engine.switchRevision(FIRST_REVISION);
            engine.daemonCachesCurrentRevision();
            JsonNode rolledBack = restart(engine, client, StartupPath.COLD);
            assertThat(rolledBack.at("/restarts/history/0/revision").asString()).isEqualTo(FIRST_REVISION);
            assertThat(rolledBack.at("/memory/signals").valueStream().map(JsonNode::asString))
                    .doesNotContain("stale_cache");
            // The daemon unreachable (the engine falls back to disk), then a hit: what the daemon holds shows again.
            assertThat(restart(engine, client, StartupPath.PRELOAD_FALLBACK)
                            .at("/memory/signals")
                            .valueStream()
                            .map(JsonNode::asString))
                    .doesNotContain("stale_cache");
            JsonNode hit = restart(engine, client, StartupPath.PRELOAD_HIT);
            assertThat(hit.at("/memory/stale_cache/daemonCheckpoint").asString())
                    .endsWith("@" + FIRST_REVISION);
            assertThat(hit.at("/memory/stale_cache/staleBytes").asLong(-1)).isZero();
            assertThat(prometheus(client)).contains("readygate_memory_signals_total{signal=\"stale_cache\"} 1.0");
        }
    }

    @Test
    void aRollbackToTheRevisionTheDaemonStillHoldsIsNoStaleCache() {
        try (RunningSimulator engine = simulator();
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            rolloutTheDaemonDoesNotFollow(engine, client);

            // The rollout is undone before the daemon followed it: the daemon holds what the engine serves again.
            engine.switchRevision(FIRST_REVISION);
            JsonNode rolledBack = restart(engine, client, StartupPath.COLD);

            assertThat(rolledBack.at("/restarts/history/0/revision").asString()).isEqualTo(FIRST_REVISION);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> status(client).at("/memory/signals").isEmpty());
            JsonNode stale = status(client).at("/memory/stale_cache");
            assertThat(stale.get("daemonCheckpoint").asString()).endsWith("@" + FIRST_REVISION);
            assertThat(stale.get("staleBytes").asLong()).isZero();
            assertThat(prometheus(client)).contains("readygate_memory_signals_total{signal=\"stale_cache\"} 1.0");
        }
    }

    @Test
    void aStartWithAPreviousRunsStateComparesNothingWithTheNewDaemon() {
        // A first run ends on v2, its daemon caching v2 (the state directory keeps its history).
        try (RunningSimulator engine = simulator();
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            ReadygateClients.awaitReady(client);
            engine.switchRevision("v2");
            engine.daemonCachesCurrentRevision();
            restart(engine, client, StartupPath.PRELOAD_HIT);
            assertThat(status(client).at("/restarts/history/0/revision").asString())
                    .isEqualTo("v2");
        }
        // The second run: a new simulator (its daemon holding the first revision) and a new readygate on that state.
        try (RunningSimulator engine = simulator();
                ConfigurableApplicationContext readygate = readygate(engine)) {
            WebTestClient client = client(readygate);
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                JsonNode history = status(client).at("/restarts/history");
                return history.size() >= 3
                        && history.get(0).get("revision").asString().equals(FIRST_REVISION)
                        && !history.get(0).at("/memory/atReady").isNull();
            });

            JsonNode status = status(client);
            assertThat(status.at("/restarts/history/1/revision").asString()).isEqualTo("v2");
            assertThat(status.at("/memory/signals").valueStream().map(JsonNode::asString))
                    .doesNotContain("stale_cache");
            assertThat(prometheus(client)).contains("readygate_memory_signals_total{signal=\"stale_cache\"} 0.0");
        }
    }
}
