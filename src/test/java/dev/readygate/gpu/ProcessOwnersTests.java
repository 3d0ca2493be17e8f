package dev.readygate.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gpu.ProcessOwners.Owner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProcessOwnersTests {

    @TempDir
    Path proc;

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', textBlock = """
            vllm preload --model /models/llama --weight-cache-socket-dir /run/wc                 | PRELOAD_DAEMON
            /opt/venv/bin/vllm preload /models/llama                                             | PRELOAD_DAEMON
            python3 -m vllm.model_executor.model_loader.weight_cache.daemon --port 9000          | PRELOAD_DAEMON
            /usr/bin/python3 /app/weight_cache/daemon.py                                         | PRELOAD_DAEMON
            python weight_cache_daemon.py                                                        | PRELOAD_DAEMON
            vllm serve /models/llama --load-format ipc_cache                                     | ENGINE
            /opt/venv/bin/vllm serve /models/llama                                               | ENGINE
            python3 -m vllm.entrypoints.openai.api_server --model /models/llama                  | ENGINE
            python -m vllm.snapshot.server --snapshot /snapshots/a                               | ENGINE
            VLLM::EngineCore                                                                     | ENGINE
            VLLM::Worker_TP1                                                                     | ENGINE
            EngineCore_DP0                                                                       | ENGINE
            python3 -m sglang.srt.weight_cache.daemon --model-path Qwen/Qwen3-8B --gpu-id 0       | PRELOAD_DAEMON
            python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --weight-cache-mode client | ENGINE
            sglang::scheduler_TP0                                                                | ENGINE
            sglang::detokenizer                                                                  | ENGINE
            python3 -m sglang.bench_serving --backend sglang                                     | OTHER
            python3                                                                              | OTHER
            /opt/torch/.venv/bin/python3                                                         | OTHER
            python3 train.py --epochs 3                                                          | OTHER
            vllm --version                                                                       | OTHER
            python -m vllm.entrypoints.cli.main bench                                            | OTHER
            '   '                                                                                | OTHER
            """)
    void classifyWhenCommandLineIsKnownReturnsItsOwner(String commandLine, Owner expected) {
        assertThat(ProcessOwners.classify(commandLine)).isEqualTo(expected);
    }

    @Test
    void classifyWhenArgumentsAreNulSeparatedReadsThem() {
        assertThat(ProcessOwners.classify("vllm\0preload\0/models/llama\0")).isEqualTo(Owner.PRELOAD_DAEMON);
    }

    @Test
    void classifyWhenVllmCliModuleRunsASubcommandReadsTheSubcommand() {
        assertThat(ProcessOwners.classify("python3 -m vllm.entrypoints.cli.main preload Qwen/Qwen3-0.6B"))
                .isEqualTo(Owner.PRELOAD_DAEMON);
        assertThat(ProcessOwners.classify("python3 -m vllm.entrypoints.cli.main serve Qwen/Qwen3-0.6B"))
                .isEqualTo(Owner.ENGINE);
    }

    @Test
    void classifyWhenCommandLineIsUnknownUsesNvidiaSmiProcessName() {
        GpuProcess process = new GpuProcess(598, "VLLM::EngineCore", Fixtures.H200_UUID, 2660 * Fixtures.MIB);

        assertThat(ProcessOwners.classify(process, null)).isEqualTo(Owner.ENGINE);
    }

    @Test
    void classifyWhenCommandLineIsKnownPrefersItOverProcessName() {
        GpuProcess process = new GpuProcess(560, "python3", Fixtures.H200_UUID, 10760 * Fixtures.MIB);

        assertThat(ProcessOwners.classify(process, "python3 -m vllm.model_executor.model_loader.weight_cache.daemon"))
                .isEqualTo(Owner.PRELOAD_DAEMON);
    }

    @Test
    void classifyWhenTheProcessWithThatIdIsAnotherOneKeepsNvidiaSmisVllmName() {
        // nvidia-smi gives the host's pid; /proc/<pid> here is an unrelated process that happens to have it (the
        // simulator's daemon, pid 4140, beside a test JVM's child of the same id: the daemon's memory went uncounted).
        GpuProcess process = new GpuProcess(4140, "VLLM::weight_cache_daemon", Fixtures.H200_UUID, 1668 * Fixtures.MIB);

        assertThat(ProcessOwners.classify(process, "/usr/bin/bash ./run-tests")).isEqualTo(Owner.PRELOAD_DAEMON);
        assertThat(ProcessOwners.classify(new GpuProcess(7, "python3", Fixtures.H200_UUID, 1), "/usr/bin/bash"))
                .isEqualTo(Owner.OTHER);
    }

    @Test
    void readCommandLineWhenFileHoldsNulSeparatedArgumentsJoinsThem() throws IOException {
        Files.createDirectories(proc.resolve("560"));
        Files.write(
                proc.resolve("560/cmdline"),
                "vllm\0serve\0/models/llama\0--port\08000\0".getBytes(StandardCharsets.UTF_8));

        assertThat(ProcessOwners.readCommandLine(proc, 560)).isEqualTo("vllm serve /models/llama --port 8000");
    }

    @Test
    void readCommandLineWhenPidIsNotVisibleReturnsNull() {
        assertThat(ProcessOwners.readCommandLine(proc, 598)).isNull();
    }

    @Test
    void readCommandLineWhenFileIsEmptyReturnsNull() throws IOException {
        Files.createDirectories(proc.resolve("7"));
        Files.write(proc.resolve("7/cmdline"), new byte[0]);

        assertThat(ProcessOwners.readCommandLine(proc, 7)).isNull();
    }

    @Test
    void readCommandLineWhenOwnProcessReadsJavaCommandLine() {
        String commandLine = ProcessOwners.readCommandLine(
                ProcessOwners.PROC, (int) ProcessHandle.current().pid());

        assertThat(commandLine).isNotNull().contains("java");
    }

    @Test
    void valueWhenOwnerIsPreloadDaemonIsSnakeCase() {
        assertThat(Owner.PRELOAD_DAEMON.value()).isEqualTo("preload_daemon");
        assertThat(GpuReading.Reason.NO_MATCHING_GPU.value()).isEqualTo("no_matching_gpu");
    }
}
