package dev.readygate.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The simulated GPU's memory through the generated {@code nvidia-smi}, in the formats of the real H200 captures. */
class GpuMemoryModelTests {

    static final String APPS = "--query-compute-apps=pid,process_name,gpu_uuid,used_memory";
    static final String GPUS =
            "--query-gpu=index,uuid,name,driver_version,memory.total,memory.used,memory.free," + "memory.reserved";

    @TempDir
    Path workDir;

    static List<String> nvidiaSmi(RunningSimulator running, String... args) throws IOException, InterruptedException {
        running.simulator.flushLogs();
        List<String> command = new java.util.ArrayList<>();
        command.add(running.simulator.gpu().script().toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .lines()
                .toList();
    }

    @Test
    void coldEngineHoldsItsOwnWeightsBesideTheDaemonsCopy() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir)) {
            List<String> apps = nvidiaSmi(running, APPS, "--format=csv,noheader,nounits");
            assertThat(apps)
                    .containsExactly(
                            "4142, VLLM::weight_cache_daemon, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 1668",
                            "4243, VLLM::EngineCore, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 8836");
            List<String> gpus = nvidiaSmi(running, GPUS, "--format=csv");
            assertThat(gpus)
                    .containsExactly(
                            "index, uuid, name, driver_version, memory.total [MiB], memory.used [MiB], memory.free [MiB], "
                                    + "memory.reserved [MiB]",
                            "0, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, NVIDIA H200, 580.159.04, 143771 MiB, 10504 MiB, "
                                    + "132651 MiB, 616 MiB");
        }
    }

    @Test
    void cacheHitChargesTheSharedWeightsToTheDaemonOnly() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir)) {
            running.restartAndAwait(StartupPath.PRELOAD_HIT);
            assertThat(nvidiaSmi(running, APPS, "--format=csv,noheader,nounits"))
                    .containsExactly(
                            "4142, VLLM::weight_cache_daemon, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 1668",
                            "4253, VLLM::EngineCore, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 7688");
        }
    }

    @Test
    void stoppedEngineLeavesTheDaemonHoldingTheWeights() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir)) {
            running.simulator.engine().stop().block(Duration.ofSeconds(5));
            assertThat(nvidiaSmi(running, APPS, "--format=csv"))
                    .containsExactly(
                            "pid, process_name, gpu_uuid, used_gpu_memory [MiB]",
                            "4142, VLLM::weight_cache_daemon, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 1668 MiB");
            running.simulator.daemon().stop().block(Duration.ofSeconds(5));
            assertThat(nvidiaSmi(running, APPS, "--format=csv,noheader,nounits"))
                    .isEmpty();
        }
    }

    @Test
    void leakPerCycleGrowsWithEveryEngineStart() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir, "memory.leak-per-cycle-mib=100")) {
            running.restartAndAwait(StartupPath.PRELOAD_HIT);
            running.restartAndAwait(StartupPath.PRELOAD_HIT);
            // Three starts, 100 MiB each, held by the daemon, which outlives the engine.
            assertThat(nvidiaSmi(running, APPS, "--format=csv,noheader,nounits"))
                    .first()
                    .isEqualTo("4142, VLLM::weight_cache_daemon, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 1968");
        }
    }

    @Test
    void checkpointSwitchCanLeaveTheOldCacheResident() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir, "memory.stale-cache-on-switch=true")) {
            running.daemonHolds("qwen3-0.6b-finetune-step2000");
            assertThat(nvidiaSmi(running, APPS, "--format=csv,noheader,nounits"))
                    .first()
                    .isEqualTo("4142, VLLM::weight_cache_daemon, GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da, 2816");
        }
    }

    @Test
    void unsupportedArgumentsFailLikeATool() throws Exception {
        try (RunningSimulator running = RunningSimulator.serving(workDir)) {
            assertThat(nvidiaSmi(running, "-q")).singleElement().asString().contains("unsupported arguments");
        }
    }
}
