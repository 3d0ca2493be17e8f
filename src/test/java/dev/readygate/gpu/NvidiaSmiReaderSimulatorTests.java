package dev.readygate.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.NvidiaSmiFormat;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Schedulers;

/** The reader that parses a real H200's nvidia-smi reads the simulator's GPU through the same code. */
class NvidiaSmiReaderSimulatorTests {

    @TempDir
    Path workDir;

    static GpuSnapshot read(RunningSimulator engine) {
        return read(engine, NvidiaSmiFormat.CSV);
    }

    static GpuSnapshot read(RunningSimulator engine, NvidiaSmiFormat format) {
        NvidiaSmiReader reader = new NvidiaSmiReader(
                engine.nvidiaSmi(),
                format,
                List.of(),
                Duration.ofSeconds(10),
                NvidiaSmiReader.DEFAULT_MAX_OUTPUT,
                Clock.systemUTC(),
                Schedulers.boundedElastic());
        GpuReading reading = reader.read().block(Duration.ofSeconds(15));
        assertThat(reading).isInstanceOf(GpuReading.Success.class);
        return ((GpuReading.Success) reading).snapshot();
    }

    static Map<ProcessOwners.Owner, Long> byOwner(GpuSnapshot snapshot) {
        return snapshot.processes().stream()
                .collect(Collectors.groupingBy(
                        process -> ProcessOwners.classify(process, null),
                        Collectors.summingLong(GpuProcess::usedBytes)));
    }

    @Test
    void readWhenTheEngineMapsTheDaemonsWeightsChargesThemToTheDaemon() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir)) {
            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            GpuSnapshot snapshot = read(engine);
            assertThat(snapshot.gpus()).singleElement().satisfies(gpu -> {
                assertThat(gpu.name()).isEqualTo("NVIDIA H200");
                assertThat(gpu.totalBytes()).isEqualTo(143_771L * 1024 * 1024);
                assertThat(gpu.usedBytes()).isEqualTo((1668L + 7688L) * 1024 * 1024);
            });
            assertThat(byOwner(snapshot))
                    .containsEntry(ProcessOwners.Owner.PRELOAD_DAEMON, 1668L * 1024 * 1024)
                    .containsEntry(ProcessOwners.Owner.ENGINE, 7688L * 1024 * 1024);
            // After the engine stops, the daemon still holds the weights: the GPU is not free.
            engine.crash();
            GpuSnapshot stopped = read(engine);
            assertThat(byOwner(stopped)).containsOnlyKeys(ProcessOwners.Owner.PRELOAD_DAEMON);
        }
    }

    @Test
    void readAsXmlGivesWhatTheCsvQueriesGive() {
        try (RunningSimulator engine = RunningSimulator.serving(workDir)) {
            engine.restartAndAwait(StartupPath.PRELOAD_HIT);
            GpuSnapshot csv = read(engine);
            GpuSnapshot xml = read(engine, NvidiaSmiFormat.XML);
            assertThat(xml.gpus()).isEqualTo(csv.gpus());
            assertThat(xml.processes()).isEqualTo(csv.processes());
            assertThat(xml.driverVersion()).isEqualTo("580.159.04");
        }
    }
}
