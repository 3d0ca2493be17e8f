package dev.readygate.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Volume;
import dev.readygate.ExternalTool;
import dev.readygate.config.ReadygateProperties;
import dev.readygate.config.TokenBudgetConverter;
import dev.readygate.server.SchedulerSliceTests;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.utility.DockerImageName;
import tools.jackson.databind.JsonNode;

/**
 * readygate and the simulated engine in real containers on the local Docker engine, both from the image the project's
 * own {@code Dockerfile} builds out of {@code target/readygate.jar}: readygate on a read-only root file system as a
 * non-root user, its state on a named volume, the engine's log and artifacts on another one that readygate reads as
 * evidence, as the chart lays them out in a pod. The engine container is restarted, frozen ({@code docker pause}) and
 * killed while readygate keeps running; then readygate's own container is restarted. Host networking only, every
 * process on its own free loopback port (there is no bridge network here; see {@code .ci/run}).
 *
 * <p>Docker is required, not optional: without it these tests fail. {@code ./mvnw verify -DskipITs} skips them.
 */
@Tag(ExternalTool.DOCKER_TAG)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContainersIT {

    private static final Logger logger = LoggerFactory.getLogger(ContainersIT.class);

    /** The image's state directory; in the engine's container, where the simulator works. */
    static final String STATE_DIR = "/var/lib/readygate";
    /** Where readygate's container sees the engine's volume (read-only), as a pod shares the engine's log. */
    static final String EVIDENCE_DIR = "/engine";

    static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    static final String ENGINE_VOLUME = "readygate-it-engine-" + RUN;
    static final String STATE_VOLUME = "readygate-it-state-" + RUN;

    static final int enginePort = Loopback.freePort();
    static final int adminPort = Loopback.freePort();
    static final int daemonHealthPort = Loopback.freePort();
    static final int readygatePort = Loopback.freePort();

    /** readygate's defaults, which the containers run with: the bounds below follow from them. */
    static final ReadygateProperties defaults = defaults();

    static @Nullable DockerClient docker;
    static @Nullable String image;
    static @Nullable GenericContainer<?> engine;
    static @Nullable GenericContainer<?> readygate;

    @RegisterExtension
    static final TestWatcher containerLogs = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, @Nullable Throwable cause) {
            for (GenericContainer<?> container : new GenericContainer<?>[] {engine, readygate}) {
                if (container != null && container.getContainerId() != null) {
                    logger.error(
                            "Last lines of {}:\n{}",
                            container.getContainerName(),
                            Loopback.tail(container.getLogs(), 60));
                }
            }
        }
    };

    @BeforeAll
    static void startContainers() {
        assertThat(DockerClientFactory.instance().isDockerAvailable())
                .as("the end-to-end tests need a Docker engine: start dockerd (.ci/run does, see README"
                        + " \"End-to-end tests\"), or skip them on purpose with -DskipITs")
                .isTrue();
        docker = DockerClientFactory.instance().client();
        String built = buildImage();
        image = built;
        docker().createVolumeCmd().withName(ENGINE_VOLUME).exec();
        docker().createVolumeCmd().withName(STATE_VOLUME).exec();
        engine = new GenericContainer<>(DockerImageName.parse(built))
                .withNetworkMode("host")
                .withTmpFs(Map.of("/tmp", "rw"))
                // A fresh named volume takes the owner of the directory it first covers: the image's state directory,
                // owned by readygate's user.
                .withCreateContainerCmdModifier(readOnlyWith(new Bind(ENGINE_VOLUME, new Volume(STATE_DIR))))
                .withCommand(
                        "simulate",
                        "--readygate.simulator.port=" + enginePort,
                        "--readygate.simulator.admin-port=" + adminPort,
                        "--readygate.simulator.preload.health-port=" + daemonHealthPort,
                        "--readygate.simulator.work-dir=" + STATE_DIR,
                        "--readygate.simulator.load-time=2s")
                .waitingFor(Wait.forLogMessage(".*Started SimulatorLauncher.*", 1));
        engine.start();
        readygate = new GenericContainer<>(DockerImageName.parse(built))
                .withNetworkMode("host")
                .withTmpFs(Map.of("/tmp", "rw"))
                .withCreateContainerCmdModifier(readOnlyWith(
                        new Bind(STATE_VOLUME, new Volume(STATE_DIR)),
                        new Bind(ENGINE_VOLUME, new Volume(EVIDENCE_DIR), AccessMode.ro)))
                .withCommand(
                        "--server.address=127.0.0.1",
                        "--server.port=" + readygatePort,
                        "--readygate.engine.base-url=http://127.0.0.1:" + enginePort,
                        "--readygate.evidence.engine-log=" + EVIDENCE_DIR + "/engine.log",
                        "--readygate.evidence.daemon-log=" + EVIDENCE_DIR + "/preload-daemon.log",
                        "--readygate.evidence.daemon-socket-dir=" + EVIDENCE_DIR + "/weight-cache",
                        "--readygate.evidence.snapshot-dir=" + EVIDENCE_DIR + "/snapshot",
                        "--readygate.evidence.daemon-health-url=http://127.0.0.1:" + daemonHealthPort + "/health",
                        // No heavy probe on the ready engine while a test freezes it: one in flight would add its own
                        // timeout (heavy-timeout) to the bound, as docs/readiness.md says.
                        "--readygate.probe.heavy-interval=10m",
                        // The engine container is restarted and killed on purpose, three starts in minutes: not a
                        // restart loop to hold (RestartTrackingTests has the hold).
                        "--readygate.restart.loop-hold=0s")
                .waitingFor(Wait.forLogMessage(".*Started ReadygateApplication.*", 1));
        readygate.start();
    }

    @AfterAll
    static void stopContainers() {
        for (GenericContainer<?> container : new GenericContainer<?>[] {readygate, engine}) {
            if (container != null) {
                if (container.getContainerId() != null && paused(container)) {
                    docker().unpauseContainerCmd(container.getContainerId()).exec();
                }
                container.stop();
            }
        }
        if (docker != null) {
            for (String volume : List.of(ENGINE_VOLUME, STATE_VOLUME)) {
                quietly(
                        "volume " + volume,
                        () -> docker().removeVolumeCmd(volume).exec());
            }
            removeImages();
        }
    }

    /**
     * The image, and what the build left of its first stage (Docker's classic builder keeps a stage's image, untagged,
     * as build cache): a layer of the jar costs its full size on the vfs storage driver, every run.
     */
    static void removeImages() {
        if (image != null) {
            String built = image;
            quietly("image " + built, () -> docker().removeImageCmd(built).exec());
        }
        docker().listImagesCmd()
                .withDanglingFilter(true)
                .withLabelFilter(Map.of("dev.readygate.build-stage", "extract"))
                .exec()
                .forEach(stage -> quietly(
                        "image " + stage.getId(),
                        () -> docker().removeImageCmd(stage.getId()).exec()));
    }

    static void quietly(String what, Runnable removal) {
        try {
            removal.run();
        } catch (RuntimeException e) {
            logger.warn("{} not removed: {}", what, e.getMessage());
        }
    }

    /** The image from the Dockerfile, built as {@code docker build .} would, from the jar Maven packaged. */
    static String buildImage() {
        Path jar = Path.of("target/readygate.jar");
        assertThat(jar)
                .as("the jar the image is built from (`./mvnw verify` packages it before the *IT run)")
                .exists();
        long start = System.nanoTime();
        String built = new ImageFromDockerfile("readygate-it:" + RUN, false)
                .withFileFromPath("Dockerfile", Path.of("Dockerfile"))
                .withFileFromPath("target/readygate.jar", jar)
                .get();
        logger.info("Built {} from the Dockerfile in {} ms", built, sinceMillis(start));
        return built;
    }

    static Consumer<CreateContainerCmd> readOnlyWith(Bind... binds) {
        // As the chart runs it: no capability, Docker's default seccomp profile.
        return create -> Objects.requireNonNull(create.getHostConfig())
                .withReadonlyRootfs(true)
                .withCapDrop(Capability.ALL)
                .withBinds(binds);
    }

    @BeforeEach
    void engineIsReady() {
        // Each test starts from a verified engine, whatever the one before left.
        awaitReady(Duration.ofSeconds(60));
    }

    @Test
    @Order(1)
    void readygateRunsAsANonRootUserWithNoCapabilityOnAReadOnlyRootFileSystem() throws Exception {
        String id = readygate().getContainerId();
        assertThat(docker().inspectContainerCmd(id).exec().getHostConfig().getReadonlyRootfs())
                .isTrue();
        assertThat(readygate().execInContainer("id", "-u").getStdout().strip()).isEqualTo("10001");
        ExecResult write = readygate().execInContainer("touch", "/app/written");
        assertThat(write.getExitCode()).isNotZero();
        assertThat(write.getStderr()).contains("Read-only file system");
        assertThat(Loopback.status(readygatePort, "/livez")).isEqualTo(200);
        assertThat(Loopback.get(readygatePort, "/actuator/prometheus").body()).contains("readygate_engine_ready 1.0");
        // Without a capability, under the default seccomp profile, its loops still get their short scheduler slice
        // (the container runs on this machine's kernel: Linux 6.12 or later keeps it).
        assertThat(readygate().getLogs())
                .contains("Event loops of readygate's server asked the kernel for a 0.1 ms scheduler slice: "
                        + (SchedulerSliceTests.kernelKeepsSlices() ? "granted" : "this kernel keeps no slice"));
        // What must survive readygate's restarts is written where the volume is.
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        readygate().execInContainer("ls", STATE_DIR).getStdout().contains("restarts.jsonl"));
    }

    @Test
    @Order(2)
    void anEngineContainerRestartIsNoticedAttributedAndKeptInTheHistory() {
        String readygateStarted = startedAt(readygate());
        List<String> before = ids(history());
        docker().restartContainerCmd(engine().getContainerId()).withTimeout(30).exec();

        await().atMost(Duration.ofSeconds(60)).until(() -> {
            JsonNode history = history();
            return history.size() > before.size()
                    && history.get(0).path("outcome").asString("").equals("ready");
        });
        JsonNode history = history();
        JsonNode latest = history.get(0);
        assertThat(latest.get("firstSeen").booleanValue()).isFalse();
        assertThat(latest.get("path").asString()).isEqualTo("cold");
        assertThat(latest.get("evidence").valueStream().map(JsonNode::asString))
                .anyMatch(line -> line.startsWith("log: Loading weights took"));
        assertThat(ids(history)).containsAll(before);
        assertThat(startedAt(readygate())).as("readygate kept running").isEqualTo(readygateStarted);
    }

    @Test
    @Order(3)
    void aFrozenEngineIsNotReadyWithinTheBoundAndReadyAgainOnceThawed() {
        // Paused, the engine's process gets no CPU: its port still accepts connections, nothing answers on them.
        docker().pauseContainerCmd(engine().getContainerId()).exec();
        try {
            awaitNotReadyWithin(hungBound(), "frozen");
            JsonNode details = Loopback.json(readygatePort, "/status");
            assertThat(details.get("state").asString()).isEqualTo("not_ready");
            assertThat(details.get("reason").asString()).isEqualTo("health_failed");
        } finally {
            docker().unpauseContainerCmd(engine().getContainerId()).exec();
        }
        awaitReady(Duration.ofSeconds(30));
    }

    @Test
    @Order(4)
    void aKilledEngineIsNotReadyWithinTheBound() {
        docker().killContainerCmd(engine().getContainerId()).exec();
        try {
            awaitNotReadyWithin(goneBound(), "killed");
            assertThat(Loopback.json(readygatePort, "/status").get("reason").asString())
                    .isEqualTo("engine_down");
        } finally {
            docker().startContainerCmd(engine().getContainerId()).exec();
        }
        awaitReady(Duration.ofSeconds(60));
    }

    @Test
    @Order(5)
    void readygatesOwnRestartRestoresTheHistoryFromItsStateVolume() {
        JsonNode before = history();
        docker().restartContainerCmd(readygate().getContainerId())
                .withTimeout(30)
                .exec();

        // The restarted readygate sees the same engine for the first time: one more record, the old ones restored.
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> history().size() > before.size());
        JsonNode after = history();
        assertThat(after.get(0).get("firstSeen").booleanValue()).isTrue();
        assertThat(ids(after)).containsAll(ids(before));
        assertThat(after.get(1).get("path").asString())
                .isEqualTo(before.get(0).get("path").asString());
    }

    /**
     * The image runs the demo as the README shows it ({@code docker run --read-only --tmpfs /tmp ... readygate
     * --spring.profiles.active=demo}): the scenario from the jar, the simulator's files in the state directory (the
     * image's {@code /tmp} is {@code noexec}, and readygate runs the simulated {@code nvidia-smi} from there), and a
     * context built at run time although the image enables Spring's AOT-processed one.
     */
    @Test
    @Order(6)
    void theImageRunsTheDemo() {
        int port = Loopback.freePort();
        try (GenericContainer<?> demo = new GenericContainer<>(DockerImageName.parse(Objects.requireNonNull(image)))
                .withNetworkMode("host")
                .withTmpFs(Map.of("/tmp", "rw"))
                .withCreateContainerCmdModifier(readOnlyWith())
                .withCommand(
                        "--spring.profiles.active=demo",
                        "--server.address=127.0.0.1",
                        "--server.port=" + port,
                        "--readygate.simulator.port=" + Loopback.freePort(),
                        "--readygate.simulator.admin-port=" + Loopback.freePort(),
                        "--readygate.simulator.preload.health-port=" + Loopback.freePort())
                .waitingFor(Wait.forLogMessage(".*Started ReadygateApplication.*", 1))) {
            demo.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> Loopback.status(port, "/readyz") == 200);
            // The start is recorded at ready, and written again once the GPU reading taken then has come (the
            // simulated nvidia-smi is a process of its own: on a busy machine, seconds later).
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
                JsonNode latest = Loopback.json(port, "/status").at("/restarts/history/0");
                assertThat(latest.at("/memory/atReady/byOwnerMiB").has("engine"))
                        .as("GPU memory by owner, from the simulated nvidia-smi: %s", latest)
                        .isTrue();
            });
            assertThat(demo.getLogs())
                    .containsPattern("scenario demo step 1/[0-9]+: ")
                    .doesNotContain(" ERROR ");
        }
    }

    static void awaitReady(Duration atMost) {
        await().atMost(atMost).until(() -> Loopback.status(readygatePort, "/readyz") == 200);
    }

    /** Waits for {@code /readyz} 503 no longer than {@code bound} from now, when the engine has just failed. */
    static void awaitNotReadyWithin(Duration bound, String engine) {
        long failed = System.nanoTime();
        await().atMost(bound).until(() -> Loopback.status(readygatePort, "/readyz") == 503);
        logger.info("{} engine: /readyz 503 after {} ms (bound {})", engine, sinceMillis(failed), bound);
    }

    /** Not ready within this of the engine going away (docs/readiness.md, "How fast readiness drops"). */
    static Duration goneBound() {
        return defaults.probe().healthInterval().plus(defaults.engine().requestTimeout());
    }

    /** Not ready within this of the engine hanging, with no heavy probe in flight (docs/readiness.md). */
    static Duration hungBound() {
        Duration cycle =
                defaults.engine().requestTimeout().plus(defaults.probe().healthInterval());
        return cycle.multipliedBy(defaults.probe().failureThreshold())
                .plus(defaults.engine().requestTimeout().multipliedBy(2));
    }

    static ReadygateProperties defaults() {
        ApplicationConversionService conversion = new ApplicationConversionService();
        conversion.addConverter(new TokenBudgetConverter());
        MapConfigurationPropertySource required =
                new MapConfigurationPropertySource(Map.of("readygate.engine.base-url", "http://127.0.0.1:1"));
        return new Binder(List.of(required), null, conversion)
                .bind("readygate", ReadygateProperties.class)
                .get();
    }

    static long sinceMillis(long nanoTime) {
        return (System.nanoTime() - nanoTime) / 1_000_000;
    }

    static JsonNode history() {
        return Loopback.json(readygatePort, "/status").at("/restarts/history");
    }

    static List<String> ids(JsonNode history) {
        List<String> ids = new ArrayList<>();
        history.forEach(record -> ids.add(record.get("id").asString()));
        return ids;
    }

    static String startedAt(GenericContainer<?> container) {
        return Objects.requireNonNull(docker().inspectContainerCmd(container.getContainerId())
                .exec()
                .getState()
                .getStartedAt());
    }

    static boolean paused(GenericContainer<?> container) {
        return Boolean.TRUE.equals(docker().inspectContainerCmd(container.getContainerId())
                .exec()
                .getState()
                .getPaused());
    }

    static DockerClient docker() {
        return Objects.requireNonNull(docker);
    }

    static GenericContainer<?> engine() {
        return Objects.requireNonNull(engine);
    }

    static GenericContainer<?> readygate() {
        return Objects.requireNonNull(readygate);
    }
}
