package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A child memory cgroup of the harness's own, for one measured process, to read its memory the way the kubelet does:
 * the working set, as cAdvisor computes {@code container_memory_working_set_bytes} and the kubelet's eviction manager
 * counts it, is the cgroup's usage less its inactive file pages (cgroup v1: {@code memory.usage_in_bytes} less
 * {@code total_inactive_file} of {@code memory.stat}; v2: {@code memory.current} less {@code inactive_file}). A page is
 * charged to the cgroup of the process that first touched it, so the process must start inside (see {@link #wrap}):
 * moved in later, what it had touched stays charged where it was.
 */
final class MemoryCgroup implements AutoCloseable {

    /** Which cgroup interface the child is in. */
    enum Version {
        V1,
        V2
    }

    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final double MIB = 1024.0 * 1024.0;

    private final Path dir;
    private final Version version;

    private MemoryCgroup(Path dir, Version version) {
        this.dir = dir;
        this.version = version;
    }

    /** A new child of this process's memory cgroup, or empty when none can be made (no writable hierarchy). */
    static Optional<MemoryCgroup> create(String name) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/self/cgroup"));
        } catch (IOException ex) {
            return Optional.empty();
        }
        for (String line : lines) {
            String[] parts = line.split(":", 3);
            if (parts.length == 3 && List.of(parts[1].split(",")).contains("memory")) {
                Optional<MemoryCgroup> v1 = child(ROOT.resolve("memory"), parts[2], name, Version.V1);
                if (v1.isPresent()) {
                    return v1;
                }
            }
        }
        for (String line : lines) {
            String[] parts = line.split(":", 3);
            if (parts.length == 3 && parts[0].equals("0") && parts[1].isEmpty()) {
                for (Path unified : List.of(ROOT, ROOT.resolve("unified"))) {
                    Optional<MemoryCgroup> v2 = child(unified, parts[2], name, Version.V2);
                    if (v2.isPresent()) {
                        return v2;
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<MemoryCgroup> child(Path mount, String own, String name, Version version) {
        // Inside a cgroup namespace the hierarchy's root is this process's own cgroup.
        Path parent = mount.resolve(own.replaceFirst("^/", ""));
        if (!Files.isDirectory(parent)) {
            parent = mount;
        }
        if (version == Version.V1 && !Files.exists(parent.resolve("memory.usage_in_bytes"))) {
            return Optional.empty();
        }
        if (version == Version.V2 && !enableMemory(parent)) {
            return Optional.empty();
        }
        Path dir = parent.resolve(name);
        try {
            Files.createDirectory(dir);
        } catch (IOException | RuntimeException ex) {
            return Optional.empty();
        }
        MemoryCgroup cgroup = new MemoryCgroup(dir, version);
        if (!Files.isWritable(dir.resolve("cgroup.procs")) || cgroup.read().isEmpty()) {
            cgroup.close();
            return Optional.empty();
        }
        return Optional.of(cgroup);
    }

    /** cgroup v2: the memory controller must be on in the parent's {@code cgroup.subtree_control} for a child. */
    private static boolean enableMemory(Path parent) {
        Path control = parent.resolve("cgroup.subtree_control");
        try {
            if (!Files.readString(parent.resolve("cgroup.controllers")).contains("memory")) {
                return false;
            }
            if (!Files.readString(control).contains("memory")) {
                Files.writeString(control, "+memory");
            }
            return Files.readString(control).contains("memory");
        } catch (IOException | RuntimeException ex) {
            return false;
        }
    }

    Version version() {
        return version;
    }

    /** The command, started by a shell that first moves itself into the cgroup, then becomes the command (same pid). */
    List<String> wrap(List<String> command) {
        List<String> out = new ArrayList<>(List.of(
                "/bin/sh", "-c", "echo $$ > '" + dir.resolve("cgroup.procs") + "' && exec \"$@\"", "readygate-cgroup"));
        out.addAll(command);
        return out;
    }

    /**
     * What the cgroup holds now, in MiB: {@code usage}, {@code working_set} (usage less inactive file pages),
     * {@code anon}, {@code file} (page cache and mapped files), {@code active_file}, {@code inactive_file}; empty when
     * it cannot be read.
     */
    Map<String, Double> read() {
        Map<String, Double> out = new LinkedHashMap<>();
        try {
            Map<String, Long> stat = stat(dir.resolve("memory.stat"));
            long usage = Long.parseLong(
                    Files.readString(dir.resolve(version == Version.V1 ? "memory.usage_in_bytes" : "memory.current"))
                            .trim());
            boolean v1 = version == Version.V1;
            long inactive = value(stat, v1 ? "total_inactive_file" : "inactive_file");
            out.put("usage", usage / MIB);
            out.put("working_set", Math.max(0, usage - inactive) / MIB);
            out.put("anon", value(stat, v1 ? "total_rss" : "anon") / MIB);
            out.put("file", value(stat, v1 ? "total_cache" : "file") / MIB);
            out.put("active_file", value(stat, v1 ? "total_active_file" : "active_file") / MIB);
            out.put("inactive_file", inactive / MIB);
        } catch (IOException | RuntimeException ex) {
            out.clear();
        }
        return out;
    }

    private static Map<String, Long> stat(Path file) throws IOException {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] kv = line.split(" ");
            if (kv.length == 2) {
                out.put(kv[0], Long.parseLong(kv[1]));
            }
        }
        return out;
    }

    private static long value(Map<String, Long> stat, String key) {
        @Nullable Long value = stat.get(key);
        if (value == null) {
            throw new IllegalStateException("memory.stat has no " + key);
        }
        return value;
    }

    /** Removes the cgroup; its process must have ended (the kernel refuses while a task is inside). */
    @Override
    public void close() {
        for (int attempt = 0; attempt < 50; attempt++) {
            try {
                Files.deleteIfExists(dir);
                return;
            } catch (IOException ex) {
                Stack.pause(java.time.Duration.ofMillis(100));
            }
        }
        Benchmark.progress("could not remove the cgroup %s", dir);
    }

    @Override
    public String toString() {
        return "cgroup " + version.name().toLowerCase(java.util.Locale.ROOT) + " " + dir;
    }
}
