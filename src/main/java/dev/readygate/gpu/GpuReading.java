package dev.readygate.gpu;

import java.util.List;
import java.util.Locale;

/** The result of one GPU memory reading: a snapshot, or the named reason no snapshot could be taken. */
public sealed interface GpuReading {

    /** The reading worked. */
    record Success(GpuSnapshot snapshot) implements GpuReading {}

    /**
     * The reading failed.
     *
     * @param reason why, as a closed set of names fit for a status page or a metric tag
     * @param detail a short human-readable detail (the line or element that did not parse, the first stderr line)
     */
    record Failure(Reason reason, String detail) implements GpuReading {}

    /**
     * The reading keeping only the given GPUs (all of it when {@code uuids} is empty), or {@code no_matching_gpu}
     * when none of them was found.
     */
    static GpuReading onlyGpus(GpuReading reading, List<String> uuids) {
        if (uuids.isEmpty() || !(reading instanceof Success(GpuSnapshot snapshot))) {
            return reading;
        }
        GpuSnapshot selected = snapshot.onlyGpus(uuids);
        if (selected.gpus().isEmpty()) {
            List<String> found = snapshot.gpus().stream().map(GpuMemory::uuid).toList();
            return new Failure(Reason.NO_MATCHING_GPU, "none of " + uuids + " among " + found);
        }
        return new Success(selected);
    }

    /** Why a reading failed. */
    enum Reason {
        /** No GPU memory source is configured. */
        NOT_CONFIGURED,
        /** The tool's binary could not be found or started. */
        BINARY_MISSING,
        /** The metrics endpoint could not be reached. */
        UNREACHABLE,
        /** The metrics endpoint answered with an HTTP status other than 200. */
        HTTP_STATUS,
        /** The tool did not finish in time (and was killed). */
        TIMED_OUT,
        /** The tool exited with a non-zero status. */
        EXIT_CODE,
        /** The tool's output was not in the expected format, or was larger than readygate reads. */
        UNEXPECTED_OUTPUT,
        /** None of the configured GPUs was found. */
        NO_MATCHING_GPU,
        /** Another I/O problem (reading the tool's output, an interruption). */
        IO_ERROR;

        /** The snake_case name used in {@code /status}, logs and metrics. */
        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
