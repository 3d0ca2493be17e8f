package dev.readygate.gpu;

import static dev.readygate.gpu.Fixtures.H200_UUID;
import static dev.readygate.gpu.Fixtures.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Runs small shell scripts in place of nvidia-smi, so the real captured output flows through the process path. */
class NvidiaSmiReaderTests {

    private static final Instant AT = Instant.parse("2026-11-30T11:45:12Z");

    private static final Clock CLOCK = Clock.fixed(AT, ZoneOffset.UTC);

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private static final Duration VERIFY = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void readWhenNvidiaSmiPrintsRealOutputReturnsSnapshot() throws IOException {
        Path binary = fakeNvidiaSmi("query-gpu.csv", apps("engine-mapped"));

        StepVerifier.create(reader(binary, List.of()).read())
                .assertNext(reading -> {
                    GpuSnapshot snapshot = NvidiaSmiParserTests.success(reading);
                    assertThat(snapshot.at()).isEqualTo(AT);
                    assertThat(snapshot.driverVersion()).isEqualTo("580.159.04");
                    assertThat(snapshot.gpus())
                            .containsExactly(new GpuMemory(
                                    H200_UUID, 0, "NVIDIA H200", 143771 * MIB, 0, 143156 * MIB, 616 * MIB));
                    assertThat(snapshot.processes())
                            .containsExactly(
                                    new GpuProcess(560, "python3", H200_UUID, 10760 * MIB),
                                    new GpuProcess(598, "/opt/torch/.venv/bin/python3", H200_UUID, 2660 * MIB));
                })
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void readWhenNoProcessHoldsMemoryReturnsSnapshotWithoutProcesses() throws IOException {
        Path binary = fakeNvidiaSmi("query-gpu.csv", Fixtures.nvidiaSmiPath("apps-idle.csv"));

        GpuReading reading = reader(binary, List.of()).read().block(VERIFY);

        assertThat(NvidiaSmiParserTests.success(reading).processes()).isEmpty();
    }

    @Test
    void readWhenConfiguredGpuIsPresentKeepsIt() throws IOException {
        Path binary = fakeNvidiaSmi("query-gpu.csv", apps("engine-exited-daemon-alive"));

        GpuReading reading = reader(binary, List.of(H200_UUID)).read().block(VERIFY);

        GpuSnapshot snapshot = NvidiaSmiParserTests.success(reading);
        assertThat(snapshot.gpus()).extracting(GpuMemory::uuid).containsExactly(H200_UUID);
        assertThat(snapshot.processes()).containsExactly(new GpuProcess(560, "python3", H200_UUID, 10760 * MIB));
    }

    @Test
    void readWhenNoConfiguredGpuIsPresentReturnsNoMatchingGpu() throws IOException {
        Path binary = fakeNvidiaSmi("query-gpu.csv", apps("engine-mapped"));

        GpuReading reading = reader(binary, List.of("GPU-other")).read().block(VERIFY);

        assertThat(reading)
                .isEqualTo(new GpuReading.Failure(
                        GpuReading.Reason.NO_MATCHING_GPU, "none of [GPU-other] among [" + H200_UUID + "]"));
    }

    @Test
    void readWhenBinaryDoesNotExistReturnsBinaryMissing() {
        GpuReading reading =
                reader(dir.resolve("no-such-nvidia-smi"), List.of()).read().block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.BINARY_MISSING));
    }

    @Test
    void readWhenBareNameIsNotOnPathReturnsBinaryMissing() {
        GpuReading reading = reader(Path.of("readygate-no-such-nvidia-smi"), List.of())
                .read()
                .block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.BINARY_MISSING));
    }

    @Test
    void readWhenNvidiaSmiExitsNonZeroReturnsExitCodeWithFirstStderrLine() throws IOException {
        Path binary = script("fails", """
                echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
                echo "Make sure that the latest NVIDIA driver is installed and running." >&2
                exit 9
                """);

        GpuReading reading = reader(binary, List.of()).read().block(VERIFY);

        assertThat(reading)
                .isEqualTo(new GpuReading.Failure(
                        GpuReading.Reason.EXIT_CODE,
                        binary + " exited with 9: NVIDIA-SMI has failed because it couldn't communicate with the"
                                + " NVIDIA driver."));
    }

    @Test
    void readWhenNvidiaSmiHangsReturnsTimedOutAndKillsIt() throws IOException {
        Path pidFile = dir.resolve("pid");
        Path binary = script("hangs", "echo $$ > '" + pidFile + "'\nexec sleep 60\n");
        NvidiaSmiReader reader = new NvidiaSmiReader(
                binary,
                List.of(),
                Duration.ofMillis(500),
                NvidiaSmiReader.DEFAULT_MAX_OUTPUT,
                CLOCK,
                Schedulers.boundedElastic());

        GpuReading reading = reader.read().block(VERIFY);

        assertThat(reading)
                .isEqualTo(new GpuReading.Failure(
                        GpuReading.Reason.TIMED_OUT, binary + " did not finish within PT0.5S (killed)"));
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
    }

    @Test
    void readWhenNvidiaSmiPrintsGarbageReturnsUnexpectedOutput() throws IOException {
        Path binary = script("garbage", "echo 'No devices were found'\n");

        GpuReading reading = reader(binary, List.of()).read().block(VERIFY);

        assertThat(reading).isInstanceOfSatisfying(GpuReading.Failure.class, failure -> {
            assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT);
            assertThat(failure.detail()).startsWith("query-gpu line 1: 1 values for 8 columns");
        });
    }

    @Test
    void readWhenNvidiaSmiPrintsTooMuchReturnsUnexpectedOutputAndKillsIt() throws IOException {
        Path binary = script("chatty", "exec yes 0123456789\n");
        NvidiaSmiReader reader = new NvidiaSmiReader(
                binary, List.of(), TIMEOUT, DataSize.ofKilobytes(4), CLOCK, Schedulers.boundedElastic());

        GpuReading reading = reader.read().block(VERIFY);

        assertThat(reading)
                .isEqualTo(new GpuReading.Failure(
                        GpuReading.Reason.UNEXPECTED_OUTPUT, binary + " printed more than 4096 bytes (killed)"));
    }

    @Test
    void readWhenSubscribedFromNonBlockingThreadRunsOnBlockingScheduler() throws IOException {
        Path binary = fakeNvidiaSmi("query-gpu.csv", Fixtures.nvidiaSmiPath("apps-idle.csv"));
        NvidiaSmiReader reader = reader(binary, List.of());

        StepVerifier.create(Mono.defer(reader::read).subscribeOn(Schedulers.parallel()))
                .assertNext(reading -> assertThat(reading).isInstanceOf(GpuReading.Success.class))
                .expectComplete()
                .verify(VERIFY);
    }

    private NvidiaSmiReader reader(Path binary, List<String> gpuUuids) {
        return new NvidiaSmiReader(
                binary, gpuUuids, TIMEOUT, NvidiaSmiReader.DEFAULT_MAX_OUTPUT, CLOCK, Schedulers.boundedElastic());
    }

    /** The {@code [apps]} lines of one {@code ipc.log} step, as a file a script can cat. */
    private Path apps(String step) throws IOException {
        return Files.writeString(dir.resolve("apps-" + step + ".csv"), Fixtures.ipcLog(step, "apps"));
    }

    /**
     * A fake nvidia-smi that prints a fixture for each query readygate makes, and fails on any other arguments (so the
     * arguments are checked too).
     */
    private Path fakeNvidiaSmi(String queryGpuFixture, Path computeApps) throws IOException {
        return script("nvidia-smi", """
                [ "$2" = "--format=csv,noheader,nounits" ] || { echo "bad format: $2" >&2; exit 2; }
                case "$1" in
                  --query-gpu=index,uuid,name,driver_version,memory.total,memory.used,memory.free,memory.reserved)
                    cat '%s' ;;
                  --query-compute-apps=pid,process_name,gpu_uuid,used_memory)
                    cat '%s' ;;
                  *) echo "bad query: $1" >&2; exit 2 ;;
                esac
                """.formatted(Fixtures.nvidiaSmiPath(queryGpuFixture), computeApps));
    }

    private Path script(String name, String body) throws IOException {
        Path script = dir.resolve(name);
        Files.writeString(script, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }
}
