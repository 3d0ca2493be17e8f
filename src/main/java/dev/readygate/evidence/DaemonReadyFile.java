package dev.readygate.evidence;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An SGLang weight-cache daemon's {@code .ready} file: the daemon's own statement that it serves, read from the
 * directory of its socket and ready files ({@code readygate.evidence.daemon-socket-dir}; SGLang's default is
 * {@code /tmp}, its templates {@code SGLANG_WEIGHT_CACHE_SOCKET_TEMPLATE} and {@code SGLANG_WEIGHT_CACHE_READY_TEMPLATE}
 * move them). {@code WeightCacheDaemon.serve()} (python/sglang/srt/weight_cache/daemon.py @0f5393f4, @366325d6) writes
 * it once its socket listens, two lines: {@code pid=N} and {@code config={...}} (its {@code CacheConfig} as a Python
 * dict: model_path, revision, tp_size, tp_rank, quant_method, dtype, ...); it unlinks the file and the socket on SIGTERM
 * or SIGINT, and leaves both behind when it is killed (SIGKILL, the OOM killer): a file whose daemon is gone says
 * "ready" for nobody (the stale {@code .ready} the review of sgl-project/sglang#27139 found).
 *
 * @param file the file's name
 * @param writtenAt when it was written: when the daemon declared itself ready
 * @param pid the daemon's process id, null when the file has none
 * @param model the config's {@code model_path}
 * @param revision the config's {@code revision}, null when unset ({@code ""})
 * @param tpRank the config's {@code tp_rank}
 * @param tpSize the config's {@code tp_size}
 * @param socketPresent whether the socket of the same name ({@code .sock}) is there
 * @param running whether that process runs (not a zombie) and is an SGLang process; null where readygate cannot see the
 *     daemon's processes (another PID namespace: a pod without {@code shareProcessNamespace})
 */
public record DaemonReadyFile(
        String file,
        Instant writtenAt,
        @Nullable Integer pid,
        @Nullable String model,
        @Nullable String revision,
        @Nullable Integer tpRank,
        @Nullable Integer tpSize,
        boolean socketPresent,
        @Nullable Boolean running) {

    /** The most of a file read: a ready file is two short lines; anything longer is not one. */
    static final int MAX_BYTES = 64 * 1024;

    /**
     * The most {@code *.ready} entries looked at in one directory, a daemon's or not (SGLang's default directory is
     * {@code /tmp}, where anything may lie): a directory full of them costs a bounded read.
     */
    static final int MAX_FILES = 64;

    private static final Pattern PID = Pattern.compile("(?m)^pid=(\\d{1,10})\\s*$");
    private static final Pattern CONFIG = Pattern.compile("(?m)^config=(\\{.*})\\s*$");

    /** One {@code 'key': value} of a Python dict's repr: a quoted string, a number, a boolean or None. */
    private static final Pattern ENTRY = Pattern.compile(
            "'(\\w{1,64})':\\s*('(?:[^'\\\\]|\\\\.){0,4096}'|\"(?:[^\"\\\\]|\\\\.){0,4096}\"|-?\\d{1,12}|True|False|None)");

    /** A line of it, for the restart record's evidence and {@code readygate check}. */
    public String describe() {
        StringBuilder out = new StringBuilder("SGLang daemon ready file ")
                .append(file)
                .append(" (written ")
                .append(writtenAt)
                .append("): ");
        out.append(pid == null ? "no pid" : "pid " + pid);
        if (running != null) {
            out.append(running ? " running" : " not running (the file was left behind: a killed daemon serves nobody)");
        } else if (pid != null) {
            out.append(" (its process is not visible from readygate's container)");
        }
        if (model != null) {
            out.append(", model ").append(model);
        }
        if (revision != null) {
            out.append(" revision ").append(revision);
        }
        if (tpRank != null && tpSize != null) {
            out.append(", tp rank ").append(tpRank).append(" of ").append(tpSize);
        }
        out.append(socketPresent ? ", socket present" : ", no socket beside it");
        return out.toString();
    }

    /**
     * The ready files in {@code dir}: each regular file whose content is a daemon's ({@code pid=} or {@code config=}
     * lines); others (a pipe, a device, another program's marker) and unreadable ones are skipped. Blocking.
     *
     * @param proc the process file system ({@code /proc}) the pids are looked up in
     */
    static List<DaemonReadyFile> in(Path dir, Path proc) {
        List<DaemonReadyFile> found = new ArrayList<>();
        int seen = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*.ready")) {
            for (Path entry : entries) {
                if (++seen > MAX_FILES) {
                    break;
                }
                DaemonReadyFile file = read(entry, proc);
                if (file != null) {
                    found.add(file);
                }
            }
        } catch (IOException | RuntimeException ex) {
            return List.copyOf(found);
        }
        found.sort(Comparator.comparing(DaemonReadyFile::file));
        return List.copyOf(found);
    }

    /** One ready file, or null when it is not a daemon's (or cannot be read). Blocking. */
    static @Nullable DaemonReadyFile read(Path file, Path proc) {
        try {
            if (!Files.isRegularFile(file)) {
                return null;
            }
            String text = head(file);
            Matcher pid = PID.matcher(text);
            Matcher config = CONFIG.matcher(text);
            boolean hasPid = pid.find();
            boolean hasConfig = config.find();
            if (!hasPid && !hasConfig) {
                return null;
            }
            Integer number = hasPid ? parseInt(pid.group(1)) : null;
            Map<String, String> entries = hasConfig ? entries(config.group(1)) : Map.of();
            String name = file.getFileName().toString();
            String stem = name.substring(0, name.length() - ".ready".length());
            String revision = entries.get("revision");
            return new DaemonReadyFile(
                    name,
                    Files.getLastModifiedTime(file).toInstant(),
                    number,
                    entries.get("model_path"),
                    revision == null || revision.isEmpty() ? null : revision,
                    parseInt(entries.get("tp_rank")),
                    parseInt(entries.get("tp_size")),
                    Files.exists(file.resolveSibling(stem + ".sock")),
                    number == null ? null : running(proc, number));
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    private static String head(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(MAX_BYTES), StandardCharsets.UTF_8);
        }
    }

    /** The dict's string, number and boolean entries, unquoted (escapes kept as written). */
    private static Map<String, String> entries(String dict) {
        Map<String, String> out = new HashMap<>();
        Matcher entry = ENTRY.matcher(dict);
        while (entry.find()) {
            String value = entry.group(2);
            if (value.startsWith("'") || value.startsWith("\"")) {
                value = value.substring(1, value.length() - 1);
            }
            out.putIfAbsent(entry.group(1), value);
        }
        return out;
    }

    /**
     * Whether {@code pid} is a running SGLang process: true when its {@code /proc} entry is there, not a zombie, and
     * its command line names SGLang; false when the entry is a zombie or another program (the pid was reused); null
     * when there is no entry, since readygate cannot tell a daemon that exited from one in another PID namespace.
     */
    static @Nullable Boolean running(Path proc, int pid) {
        Path dir = proc.resolve(Integer.toString(pid));
        try {
            if (!Files.isDirectory(dir)) {
                return null;
            }
            String stat = Files.readString(dir.resolve("stat"), StandardCharsets.UTF_8);
            // The state letter follows the command's name, which is in parentheses and may hold spaces.
            String[] after = stat.substring(stat.lastIndexOf(')') + 1).strip().split("\\s+", 2);
            if (after.length == 0 || after[0].equals("Z") || after[0].equals("X")) {
                return false;
            }
            String command = new String(Files.readAllBytes(dir.resolve("cmdline")), StandardCharsets.UTF_8)
                    .replace('\0', ' ')
                    .toLowerCase(Locale.ROOT);
            return command.contains("sglang");
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    private static @Nullable Integer parseInt(@Nullable String value) {
        if (value == null) {
            return null;
        }
        try {
            return Integer.valueOf(value.strip());
        } catch (NumberFormatException ex) {
            return null;
        }
    }
}
