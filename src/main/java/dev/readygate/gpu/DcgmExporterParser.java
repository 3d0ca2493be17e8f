package dev.readygate.gpu;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Parses the DCGM exporter's Prometheus text (no I/O) for the framebuffer gauges {@code DCGM_FI_DEV_FB_USED},
 * {@code DCGM_FI_DEV_FB_FREE} and, when exported, {@code DCGM_FI_DEV_FB_RESERVED} (all in MiB), one
 * {@link GpuMemory} per {@code UUID} label; the total is used + free (+ reserved). The {@code gpu} label gives the
 * index, {@code modelName} the name and {@code DCGM_FI_DRIVER_VERSION}, when present, the driver version. Other
 * series are skipped. Lines that do not parse give {@link GpuReading.Reason#UNEXPECTED_OUTPUT} naming the line; no
 * exception escapes. The exporter lists no processes.
 */
final class DcgmExporterParser {

    /** Framebuffer memory used, in MiB. */
    public static final String FB_USED = "DCGM_FI_DEV_FB_USED";

    /** Framebuffer memory free, in MiB. */
    public static final String FB_FREE = "DCGM_FI_DEV_FB_FREE";

    /** Framebuffer memory reserved by the driver, in MiB (exported only when configured). */
    public static final String FB_RESERVED = "DCGM_FI_DEV_FB_RESERVED";

    private static final String UUID_LABEL = "UUID";

    private DcgmExporterParser() {}

    /** Parses one scrape of the exporter, taken at {@code at}. */
    public static GpuReading parse(String text, Instant at) {
        try {
            return new GpuReading.Success(read(text, at));
        } catch (UnexpectedOutput ex) {
            return new GpuReading.Failure(GpuReading.Reason.UNEXPECTED_OUTPUT, String.valueOf(ex.getMessage()));
        }
    }

    /** The framebuffer samples of one GPU, collected line by line. */
    private static final class Gpu {
        final Map<String, String> labels;
        final Map<String, Long> mib = new HashMap<>();

        Gpu(Map<String, String> labels) {
            this.labels = labels;
        }
    }

    private static GpuSnapshot read(String text, Instant at) {
        Map<String, Gpu> gpus = new LinkedHashMap<>();
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = "line " + (i + 1);
            String name = metricName(line);
            if (!name.equals(FB_USED) && !name.equals(FB_FREE) && !name.equals(FB_RESERVED)) {
                continue;
            }
            int[] end = new int[1];
            Map<String, String> labels = labels(line, name.length(), end, where);
            String uuid = labels.get(UUID_LABEL);
            if (uuid == null || uuid.isBlank()) {
                throw new UnexpectedOutput(where + ": " + name + " without a UUID label");
            }
            long value = value(line.substring(end[0]), where);
            Gpu gpu = gpus.computeIfAbsent(uuid, key -> new Gpu(labels));
            if (gpu.mib.put(name, value) != null) {
                throw new UnexpectedOutput(where + ": " + name + " twice for " + uuid);
            }
        }
        if (gpus.isEmpty()) {
            throw new UnexpectedOutput("no " + FB_USED + " sample");
        }
        List<GpuMemory> memory = new ArrayList<>();
        String driverVersion = null;
        for (Map.Entry<String, Gpu> entry : gpus.entrySet()) {
            Gpu gpu = entry.getValue();
            memory.add(memory(entry.getKey(), gpu, memory.size()));
            if (driverVersion == null) {
                driverVersion = blankToNull(gpu.labels.get("DCGM_FI_DRIVER_VERSION"));
            }
        }
        return new GpuSnapshot(at, memory, List.of(), driverVersion);
    }

    private static GpuMemory memory(String uuid, Gpu gpu, int position) {
        Long used = gpu.mib.get(FB_USED);
        Long free = gpu.mib.get(FB_FREE);
        if (used == null || free == null) {
            throw new UnexpectedOutput(uuid + ": no " + (used == null ? FB_USED : FB_FREE) + " sample");
        }
        Long reserved = gpu.mib.get(FB_RESERVED);
        long total = used + free + (reserved == null ? 0 : reserved);
        String index = gpu.labels.get("gpu");
        int gpuIndex;
        try {
            gpuIndex = index == null ? position : Integer.parseInt(index);
        } catch (NumberFormatException ex) {
            throw new UnexpectedOutput(uuid + ": gpu label is not a number: " + NvidiaSmiParser.excerpt(index));
        }
        String model = gpu.labels.get("modelName");
        return new GpuMemory(
                uuid,
                gpuIndex,
                model == null ? "" : model,
                bytes(total),
                bytes(used),
                bytes(free),
                reserved == null ? null : bytes(reserved));
    }

    private static long bytes(long mib) {
        try {
            return Math.multiplyExact(mib, NvidiaSmiParser.MIB);
        } catch (ArithmeticException ex) {
            throw new UnexpectedOutput("size too large: " + mib + " MiB");
        }
    }

    private static String metricName(String line) {
        int end = 0;
        while (end < line.length() && line.charAt(end) != '{' && !Character.isWhitespace(line.charAt(end))) {
            end++;
        }
        return line.substring(0, end);
    }

    /** The labels in {@code {a="x",b="y"}} starting at {@code start}; {@code end[0]} is set past the brace. */
    private static Map<String, String> labels(String line, int start, int[] end, String where) {
        Map<String, String> labels = new HashMap<>();
        int i = start;
        if (i >= line.length() || line.charAt(i) != '{') {
            end[0] = i;
            return labels;
        }
        i++;
        while (true) {
            while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                i++;
            }
            if (i < line.length() && line.charAt(i) == '}') {
                end[0] = i + 1;
                return labels;
            }
            int equals = line.indexOf('=', i);
            if (equals < 0 || equals + 1 >= line.length() || line.charAt(equals + 1) != '"') {
                throw new UnexpectedOutput(where + ": malformed labels: " + NvidiaSmiParser.excerpt(line));
            }
            String key = line.substring(i, equals).strip();
            StringBuilder value = new StringBuilder();
            i = equals + 2;
            while (true) {
                if (i >= line.length()) {
                    throw new UnexpectedOutput(where + ": unterminated label value: " + NvidiaSmiParser.excerpt(line));
                }
                char c = line.charAt(i++);
                if (c == '"') {
                    break;
                }
                if (c == '\\' && i < line.length()) {
                    char escaped = line.charAt(i++);
                    value.append(escaped == 'n' ? '\n' : escaped);
                } else {
                    value.append(c);
                }
            }
            labels.put(key, value.toString());
        }
    }

    /** The sample value (MiB), ignoring an optional timestamp after it. */
    private static long value(String rest, String where) {
        String[] parts = rest.strip().split("\\s+");
        if (parts.length == 0 || parts[0].isEmpty() || parts.length > 2) {
            throw new UnexpectedOutput(where + ": no sample value");
        }
        double value;
        try {
            value = Double.parseDouble(parts[0]);
        } catch (NumberFormatException ex) {
            throw new UnexpectedOutput(where + ": not a number: " + NvidiaSmiParser.excerpt(parts[0]));
        }
        if (!Double.isFinite(value) || value < 0 || value != Math.rint(value) || value > Long.MAX_VALUE) {
            throw new UnexpectedOutput(where + ": not a size in MiB: " + NvidiaSmiParser.excerpt(parts[0]));
        }
        return (long) value;
    }

    private static @Nullable String blankToNull(@Nullable String value) {
        return value == null || value.isBlank() ? null : value;
    }

    /** Thrown inside the parser only; {@link #parse} turns it into a failure. */
    private static final class UnexpectedOutput extends RuntimeException {

        UnexpectedOutput(String message) {
            super(message, null, false, false);
        }
    }
}
