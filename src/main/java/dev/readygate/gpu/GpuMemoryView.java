package dev.readygate.gpu;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The last GPU memory reading, attributed to owners: who holds how much on each GPU, or why it could not be read.
 *
 * @param at when it was read
 * @param gpus the GPUs, as read
 * @param byOwner per GPU UUID, the bytes each owner ({@code engine}, {@code preload_daemon}, {@code other}) holds
 * @param failure the named reason of a failed reading, or null
 * @param failureDetail a short explanation of the failure
 */
public record GpuMemoryView(
        Instant at,
        List<GpuMemory> gpus,
        Map<String, Map<ProcessOwners.Owner, Long>> byOwner,
        GpuReading.@Nullable Reason failure,
        @Nullable String failureDetail) {

    public GpuMemoryView {
        gpus = List.copyOf(gpus);
        byOwner = Map.copyOf(byOwner);
    }

    static GpuMemoryView failed(Instant at, GpuReading.Failure failure) {
        return new GpuMemoryView(at, List.of(), Map.of(), failure.reason(), failure.detail());
    }
}
