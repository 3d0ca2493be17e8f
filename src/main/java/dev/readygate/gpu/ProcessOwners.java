package dev.readygate.gpu;

import com.fasterxml.jackson.annotation.JsonValue;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Tells who holds GPU memory: the vLLM engine, the {@code vllm preload} weight-cache daemon, or another process, from
 * a process's command line (or, when that cannot be read, the name nvidia-smi reported, which is often a process
 * title such as {@code VLLM::EngineCore}).
 *
 * <p>Command lines come from {@code /proc/<pid>/cmdline}. nvidia-smi reports host pids; inside a pod the reader sees
 * other containers' processes only with {@code shareProcessNamespace: true}, and even then under the pod's pids, so an
 * unreadable command line is normal and classifies by name only.
 */
public final class ProcessOwners {

    /** Who a GPU process is. */
    public enum Owner {
        /** The vLLM engine: the API server, its engine core or its workers. */
        ENGINE,
        /** The weight-cache daemon that keeps the weights on the GPU across engine restarts. */
        PRELOAD_DAEMON,
        /** Anything else (another workload, or a process readygate cannot identify). */
        OTHER;

        /** The snake_case name used in {@code /status}, records, logs and metrics. */
        @JsonValue
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The owner of a value; one this version does not know is {@link #OTHER}. */
        public static Owner of(String value) {
            for (Owner owner : values()) {
                if (owner.value().equals(value)) {
                    return owner;
                }
            }
            return OTHER;
        }
    }

    /** The default {@code /proc} mount. */
    public static final Path PROC = Path.of("/proc");

    private static final int MAX_CMDLINE_BYTES = 64 * 1024;

    private static final List<String> DAEMON_MODULE_PREFIXES = List.of("vllm.model_executor.model_loader.weight_cache");

    private static final List<String> ENGINE_MODULES = List.of(
            "vllm.entrypoints.openai.api_server",
            "vllm.entrypoints.api_server",
            "vllm.snapshot.server",
            "sglang.launch_server");

    private ProcessOwners() {}

    /**
     * Classifies a process by its command line when known and it names vLLM, else by the name nvidia-smi reported.
     * nvidia-smi reports the host's process ids: in a container, or beside other processes, {@code /proc/<pid>} may be
     * another process that happens to have that id, and its command line must not hide a {@code VLLM::} name.
     */
    public static Owner classify(GpuProcess process, @Nullable String commandLine) {
        Owner byCommand = commandLine != null && !commandLine.isBlank() ? classify(commandLine) : Owner.OTHER;
        return byCommand != Owner.OTHER ? byCommand : classify(process.processName());
    }

    /**
     * Classifies a command line (arguments separated by spaces or NULs). The daemon is recognised first: {@code vllm
     * preload}, {@code -m vllm.model_executor.model_loader.weight_cache.daemon} or any {@code weight_cache} daemon
     * script (SGLang's {@code -m sglang.srt.weight_cache.daemon} too); the engine by {@code vllm serve}, {@code -m
     * vllm.entrypoints.openai.api_server}, {@code -m vllm.snapshot.server}, SGLang's {@code -m sglang.launch_server}
     * or a {@code VLLM::} / {@code EngineCore} / {@code sglang::} process title.
     */
    public static Owner classify(String commandLine) {
        List<String> args = List.of(commandLine.strip().split("[\\s\\x00]+"));
        if (args.isEmpty() || args.getFirst().isEmpty()) {
            return Owner.OTHER;
        }
        if (isDaemon(args)) {
            return Owner.PRELOAD_DAEMON;
        }
        if (isEngine(args)) {
            return Owner.ENGINE;
        }
        return Owner.OTHER;
    }

    private static boolean isDaemon(List<String> args) {
        if (vllmSubcommand(args, "preload")) {
            return true;
        }
        String module = module(args);
        if (module != null && DAEMON_MODULE_PREFIXES.stream().anyMatch(module::startsWith)) {
            return true;
        }
        return args.stream().anyMatch(arg -> arg.contains("weight_cache") && arg.contains("daemon"));
    }

    private static boolean isEngine(List<String> args) {
        if (vllmSubcommand(args, "serve")) {
            return true;
        }
        String module = module(args);
        if (module != null && ENGINE_MODULES.contains(module)) {
            return true;
        }
        // vLLM names its processes with setproctitle: VLLM::EngineCore, VLLM::Worker_TP0, VLLM::APIServer; SGLang
        // its schedulers sglang::scheduler_TP0 (configure_scheduler_process) and sglang::detokenizer.
        String title = args.getFirst();
        return title.startsWith("VLLM::") || title.contains("EngineCore") || title.startsWith("sglang::");
    }

    /**
     * Whether the command is {@code vllm <subcommand>} ({@code vllm} possibly a path, or run by a Python), or {@code
     * python -m vllm.entrypoints.cli.main <subcommand>} (how vLLM's own tests launch {@code vllm preload}).
     */
    private static boolean vllmSubcommand(List<String> args, String subcommand) {
        for (int i = 0; i + 1 < args.size(); i++) {
            String arg = args.get(i);
            String base = arg.substring(arg.lastIndexOf('/') + 1);
            boolean cli = base.equals("vllm") || arg.equals("vllm.entrypoints.cli.main");
            if (cli && args.get(i + 1).equals(subcommand)) {
                return true;
            }
        }
        return false;
    }

    /** The module of {@code python -m <module>}, if any. */
    private static @Nullable String module(List<String> args) {
        for (int i = 0; i + 1 < args.size(); i++) {
            if (args.get(i).equals("-m")) {
                return args.get(i + 1);
            }
        }
        return null;
    }

    /**
     * Reads {@code <proc>/<pid>/cmdline} (blocking: call it on a scheduler that allows blocking), its NUL-separated
     * arguments joined by spaces; {@code null} when it cannot be read or is empty (a kernel thread, a zombie, or a pid
     * from another PID namespace).
     *
     * @param proc the {@code /proc} mount, {@link #PROC} outside tests
     * @param pid the process id, in the PID namespace of that mount
     */
    public static @Nullable String readCommandLine(Path proc, int pid) {
        if (pid <= 0) {
            return null;
        }
        try (InputStream in =
                Files.newInputStream(proc.resolve(Integer.toString(pid)).resolve("cmdline"))) {
            byte[] bytes = in.readNBytes(MAX_CMDLINE_BYTES);
            String commandLine =
                    new String(bytes, StandardCharsets.UTF_8).replace('\0', ' ').strip();
            return commandLine.isEmpty() ? null : commandLine;
        } catch (IOException | SecurityException ex) {
            return null;
        }
    }
}
