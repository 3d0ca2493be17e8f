package dev.readygate.evidence;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * What a log file readygate is pointed at holds, read once (for {@code readygate check}): how many lines its last few
 * megabytes have, and how many of them are vLLM's lines readygate recognizes, by kind. Blocking file I/O: a command
 * line's thread only.
 *
 * @param lines the lines read
 * @param recognized the vLLM events among them, by kind ({@code LoadingWeights}, {@code ServerVersion}, ...)
 * @param lastEngineArgs the latest {@code non-default args: {...}} the engine logged (secrets redacted), or null
 */
public record LogSample(
        int lines,
        Map<String, Integer> recognized,
        @Nullable String lastEngineArgs) {

    private static final int MAX_BYTES = 4 << 20;

    public LogSample {
        recognized = java.util.Collections.unmodifiableMap(new TreeMap<>(recognized));
    }

    /** Reads the last 4 MB of {@code file}. */
    public static LogSample of(Path file, Clock clock) throws IOException {
        Map<String, Integer> found = new TreeMap<>();
        String args = null;
        int lines = 0;
        VllmLogParser parser = new VllmLogParser(clock);
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            long from = Math.max(0, length - MAX_BYTES);
            byte[] bytes = new byte[(int) (length - from)];
            in.seek(from);
            in.readFully(bytes);
            for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
                lines++;
                LogEvent event = parser.parse(line);
                if (event != null) {
                    found.merge(event.getClass().getSimpleName(), 1, Integer::sum);
                }
                if (event instanceof LogEvent.NonDefaultArgs logged) {
                    args = logged.args();
                }
            }
        }
        return new LogSample(lines, found, args);
    }
}
