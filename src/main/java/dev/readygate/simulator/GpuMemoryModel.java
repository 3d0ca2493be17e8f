package dev.readygate.simulator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The simulated GPU's memory, consistent with the scenario: a CUDA context per process, the preload daemon holding
 * the weights (and, after a checkpoint switch that leaves it resident, the old checkpoint's too), the engine its KV
 * cache and, unless it maps the daemon's weights, its own weights; optionally a leak per engine start. Shown as
 * {@code nvidia-smi} shows a real H200 (the reference captures): memory shared over CUDA IPC is charged to its owner
 * only. Written to {@code <work-dir>/gpu/} and served by a generated {@code <work-dir>/bin/nvidia-smi} script, so
 * readygate's reader runs the same parsing code against the simulator as against a real GPU.
 */
final class GpuMemoryModel implements AutoCloseable {

    static final long MIB = 1024L * 1024;
    private static final long TOTAL_MIB = 143_771;
    private static final long RESERVED_MIB = 616;
    private static final long CONTEXT_MIB = 520;
    private static final long KV_KIB_PER_TOKEN = 112;

    private final SimulatorProperties properties;
    private final Path dir;
    private final Path script;
    private final ExecutorService writer;
    private final long weightsMib;
    private int daemonPid = -1;
    private long daemonWeightsMib;
    private long staleMib;
    private long leakedMib;
    private int enginePid = -1;
    private long engineMib;
    private long engineKvMib;
    private long engineWeightsMib;
    private volatile String dcgm = "";

    GpuMemoryModel(SimulatorProperties properties) {
        this.properties = properties;
        this.dir = properties.effectiveWorkDir().resolve("gpu");
        this.script = properties.effectiveWorkDir().resolve("bin").resolve("nvidia-smi");
        this.writer = SerialExecutor.start("simulator-gpu-" + properties.port());
        this.weightsMib = Math.round(properties.model().weightsGib() * 1024);
        publish();
    }

    /** The daemon cached the weights: its context and the weights are its memory. */
    synchronized void daemonReady(int pid) {
        daemonPid = pid;
        daemonWeightsMib = weightsMib;
        publish();
    }

    /**
     * The daemon stopped and freed its memory, or, with {@code keepResident} (a checkpoint switch that leaves the old
     * cache resident), went on holding the old weights as a stale cache.
     */
    synchronized void daemonStopped(boolean keepResident) {
        if (keepResident) {
            staleMib += daemonWeightsMib;
            daemonWeightsMib = 0;
        } else {
            daemonPid = -1;
            daemonWeightsMib = 0;
            staleMib = 0;
            leakedMib = 0;
        }
        publish();
    }

    /** The engine core holds a context, its KV cache and, unless it maps the daemon's weights, its own weights. */
    synchronized void engineLoaded(int pid, boolean ownWeights, long kvTokens) {
        enginePid = pid;
        engineKvMib = kvMib(kvTokens);
        engineWeightsMib = ownWeights ? weightsMib : 0;
        engineMib = CONTEXT_MIB + engineKvMib + engineWeightsMib;
        leakedMib += properties.memory().leakPerCycleMib();
        publish();
    }

    synchronized void engineStopped() {
        enginePid = -1;
        engineMib = 0;
        engineKvMib = 0;
        engineWeightsMib = 0;
        publish();
    }

    /**
     * Sleep mode: what of the engine's own memory is mapped (a sleep frees the weights and the KV cache, which vLLM
     * allocates in its CuMem pool; the CUDA context and the CUDA graphs stay); a wake maps the woken tags back.
     */
    synchronized void engineResident(boolean weights, boolean kvCache) {
        if (enginePid < 0) {
            return;
        }
        engineMib = CONTEXT_MIB + (weights ? engineWeightsMib : 0) + (kvCache ? engineKvMib : 0);
        publish();
    }

    /** The memory in use on the GPU, all processes, in GiB (the worker's {@code memory is still in use}). */
    synchronized double usedGib() {
        return usedMib() / 1024.0;
    }

    /**
     * The KV cache a start sizes: the configured tokens, less what leaked so far when the leak comes out of the KV
     * cache (as with vLLM, which sizes its KV cache from the memory left under {@code gpu_memory_utilization}).
     */
    synchronized int kvCacheTokens() {
        int configured = properties.model().kvCacheSizeTokens();
        if (!properties.memory().leakShrinksKvCache()) {
            return configured;
        }
        long leakedTokens = leakedMib * 1024 / KV_KIB_PER_TOKEN;
        return (int) Math.max(properties.model().maxModelLen(), configured - leakedTokens);
    }

    // About 112 KiB of KV cache per token, as for Qwen3-0.6B in bf16 (28 layers x 8 KV heads x 128 x 2 x 2 B).
    private static long kvMib(long tokens) {
        return tokens * KV_KIB_PER_TOKEN / 1024;
    }

    /** Memory per process as {@code nvidia-smi --query-compute-apps} lists it, in MiB. */
    synchronized Map<String, Long> byOwner() {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("engine", engineMib);
        out.put("preload_daemon", daemonMib());
        out.put("total", usedMib());
        return out;
    }

    private long daemonMib() {
        if (daemonPid < 0) {
            return leakedMib;
        }
        return CONTEXT_MIB + daemonWeightsMib + staleMib + leakedMib;
    }

    private long usedMib() {
        return engineMib + daemonMib();
    }

    private void publish() {
        String uuid = properties.model().gpuUuid();
        String name = properties.model().gpuName();
        long used = usedMib();
        String driver = properties.model().driverVersion();
        String gpuRow = "0, %s, %s, %s, %d, %d, %d, %d"
                .formatted(uuid, name, driver, TOTAL_MIB, used, TOTAL_MIB - used - RESERVED_MIB, RESERVED_MIB);
        String gpuRowUnits = "0, %s, %s, %s, %d MiB, %d MiB, %d MiB, %d MiB"
                .formatted(uuid, name, driver, TOTAL_MIB, used, TOTAL_MIB - used - RESERVED_MIB, RESERVED_MIB);
        List<String> apps = new ArrayList<>();
        List<String> appsUnits = new ArrayList<>();
        StringBuilder processes = new StringBuilder();
        // SGLang's scheduler titles itself sglang::scheduler (configure_scheduler_process); its daemon runs as a
        // module.
        boolean sglang = properties.sglang();
        String daemonName = sglang ? "python3 -m sglang.srt.weight_cache.daemon" : "VLLM::weight_cache_daemon";
        String engineName = sglang ? "sglang::scheduler" : "VLLM::EngineCore";
        if (daemonPid >= 0 || leakedMib > 0) {
            int pid = daemonPid >= 0 ? daemonPid : properties.pid() - 100;
            apps.add("%d, %s, %s, %d".formatted(pid, daemonName, uuid, daemonMib()));
            appsUnits.add("%d, %s, %s, %d MiB".formatted(pid, daemonName, uuid, daemonMib()));
            processes.append(processXml(pid, daemonName, daemonMib()));
        }
        if (enginePid >= 0) {
            apps.add("%d, %s, %s, %d".formatted(enginePid, engineName, uuid, engineMib));
            appsUnits.add("%d, %s, %s, %d MiB".formatted(enginePid, engineName, uuid, engineMib));
            processes.append(processXml(enginePid, engineName, engineMib));
        }
        long free = TOTAL_MIB - used - RESERVED_MIB;
        String xml = """
                <?xml version="1.0" ?>
                <!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">
                <nvidia_smi_log>
                	<driver_version>%s</driver_version>
                	<cuda_version>13.0</cuda_version>
                	<attached_gpus>1</attached_gpus>
                	<gpu id="00000000:00:06.0">
                		<product_name>%s</product_name>
                		<uuid>%s</uuid>
                		<minor_number>0</minor_number>
                		<fb_memory_usage>
                			<total>%d MiB</total>
                			<reserved>%d MiB</reserved>
                			<used>%d MiB</used>
                			<free>%d MiB</free>
                		</fb_memory_usage>
                		<processes>
                %s		</processes>
                	</gpu>
                </nvidia_smi_log>
                """.formatted(driver, name, uuid, TOTAL_MIB, RESERVED_MIB, used, free, processes);
        String labels = "gpu=\"0\",UUID=\"%s\",device=\"nvidia0\",modelName=\"%s\",Hostname=\"simulator\""
                .formatted(uuid, name);
        dcgm = """
                # HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
                # TYPE DCGM_FI_DEV_FB_FREE gauge
                DCGM_FI_DEV_FB_FREE{%s} %d
                # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
                # TYPE DCGM_FI_DEV_FB_USED gauge
                DCGM_FI_DEV_FB_USED{%s} %d
                # HELP DCGM_FI_DEV_FB_RESERVED Framebuffer memory reserved (in MiB).
                # TYPE DCGM_FI_DEV_FB_RESERVED gauge
                DCGM_FI_DEV_FB_RESERVED{%s} %d
                """.formatted(labels, free, labels, used, labels, RESERVED_MIB);
        Map<String, String> files = new LinkedHashMap<>();
        files.put("gpu.xml", xml);
        files.put("gpus.csv", gpuRow + "\n");
        files.put(
                "gpus-header.csv",
                "index, uuid, name, driver_version, memory.total [MiB], memory.used [MiB], "
                        + "memory.free [MiB], memory.reserved [MiB]\n" + gpuRowUnits + "\n");
        files.put("apps.csv", apps.isEmpty() ? "" : String.join("\n", apps) + "\n");
        files.put(
                "apps-header.csv",
                "pid, process_name, gpu_uuid, used_gpu_memory [MiB]\n"
                        + (appsUnits.isEmpty() ? "" : String.join("\n", appsUnits) + "\n"));
        if (!writer.isShutdown()) {
            writer.execute(() -> write(files));
        }
    }

    private void write(Map<String, String> files) {
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, String> file : files.entrySet()) {
                Path temporary = dir.resolve(file.getKey() + ".tmp");
                Files.writeString(temporary, file.getValue());
                Files.move(
                        temporary,
                        dir.resolve(file.getKey()),
                        StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            }
            if (!Files.exists(script)) {
                Files.createDirectories(script.getParent());
                Files.writeString(script, """
                        #!/bin/sh
                        # nvidia-smi as the vLLM simulator's GPU shows it (readygate's GPU reader runs this).
                        dir="$(dirname "$0")/../gpu"
                        case "$*" in
                          "-q -x"|"-x -q") cat "$dir/gpu.xml"; exit 0 ;;
                          *--query-compute-apps*) kind=apps ;;
                          *--query-gpu*) kind=gpus ;;
                          *) echo "simulated nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;;
                        esac
                        case "$*" in
                          *noheader*) cat "$dir/$kind.csv" ;;
                          *) cat "$dir/$kind-header.csv" ;;
                        esac
                        """);
                try {
                    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
                } catch (UnsupportedOperationException ex) {
                    // Not a POSIX file system: the script cannot be made executable there.
                }
            }
        } catch (IOException ex) {
            // The simulated GPU is a convenience of the simulator: failing to show it must not stop the engine.
            System.err.println("simulator: cannot write simulated GPU memory in " + dir + ": " + ex.getMessage());
        }
    }

    private static String processXml(int pid, String name, long mib) {
        return """
                			<process_info>
                				<gpu_instance_id>N/A</gpu_instance_id>
                				<compute_instance_id>N/A</compute_instance_id>
                				<pid>%d</pid>
                				<type>C</type>
                				<process_name>%s</process_name>
                				<used_memory>%d MiB</used_memory>
                			</process_info>
                """.formatted(pid, name, mib);
    }

    /** The GPU as the DCGM exporter's {@code /metrics} shows it (framebuffer used, free and reserved, in MiB). */
    String dcgmMetrics() {
        return dcgm;
    }

    /** Waits for pending writes (tests). */
    void flush() {
        try {
            writer.submit(() -> {}).get(5, TimeUnit.SECONDS);
        } catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    Path script() {
        return script;
    }

    String describe() {
        return byOwner().toString().toLowerCase(Locale.ROOT);
    }

    /**
     * Stops writing, after the writes already asked for: a caller that removes the work directory next (a test's
     * temporary folder) must not race a write that creates {@code gpu/} again. Synchronized like every change, so none
     * publishes between the shutdown and the wait.
     */
    @Override
    public synchronized void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
